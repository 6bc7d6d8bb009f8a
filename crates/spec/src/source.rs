//! Sources read only when bounded: a spec file, an `.npy` file or a golden is opened only if it
//! is a regular file. A FIFO would block the open (or the read) until someone writes, a device
//! such as `/dev/zero` never ends, a socket cannot be opened, a folder is not data: each is a
//! clear error naming it, never a hang.

use std::fs::{File, Metadata};
use std::path::Path;

/// What a path that is not a regular file is, in words.
pub fn describe(metadata: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = metadata.file_type();
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if metadata.is_dir() {
        "a folder"
    } else if metadata.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file (symbolic links followed); anything else
/// is refused before it is opened, with a message naming the path and what it is.
pub fn open_regular(path: &Path) -> Result<File, String> {
    let shown = path.display();
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let refuse = |metadata: &Metadata| {
        format!(
            "cannot read {shown}: it is {}, not a regular file (only regular files are read, so that reading ends)",
            describe(metadata)
        )
    };
    if !metadata.is_file() {
        return Err(refuse(&metadata));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Should the path become a FIFO between the check and the open, the open must not block.
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000;
        options.custom_flags(O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !metadata.is_file() {
        return Err(refuse(&metadata));
    }
    Ok(file)
}

/// Reads a regular file whole, refusing one larger than `limit` bytes before reading it.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = open_regular(path)?;
    let size = file
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if size > limit {
        return Err(format!(
            "cannot read {}: it is {size} bytes, over the {limit} bytes allowed",
            path.display()
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // `take`: a file that grows while read stays within the bound.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "cannot read {}: it grew past the {limit} bytes allowed while read",
            path.display()
        ));
    }
    Ok(bytes)
}
