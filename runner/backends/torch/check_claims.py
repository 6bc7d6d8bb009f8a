#!/usr/bin/python3
"""Every claim of known-failures.txt about torch, shown on torch directly (no adapter): for each
(clause, reason) the file states about torch, the smallest torch program that shows it, and whether
the claim holds. Run with the interpreter of engine.toml (runner/tests/engines.rs); exit 0 when
every claim holds, 1 when one does not (torch changed: update known-failures.txt) or when the file
states a claim no check here shows. AsStrided's clauses are also replayed one by one by
check_as_strided.py. The entries of class `adapter` state a limit of the adapter, not of torch,
and are not shown here.
"""

import os
import platform
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from claims import Claims, shown  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

CLAIMS = Claims()
claim = CLAIMS.claim


def raises(call, text):
    """Whether `call` fails with a message containing `text`."""
    try:
        call()
    except (RuntimeError, IndexError, ValueError) as e:
        print(f"    raised: {type(e).__name__}: {' '.join(str(e).split())[:160]}")
        return text in str(e)
    return False


def bits16(t):
    return t.view(torch.int16).tolist()


x5 = torch.arange(5.0)
x23 = torch.arange(6.0).reshape(2, 3)
big = torch.tensor([float("inf"), 1e30, 3.4e38, float("nan"), -float("inf")])
nan7d01 = torch.tensor([0x7D01], dtype=torch.int16).view(torch.float16)


@claim("as_strided.bounds.reach", "torch.as_strided does not check a storage offset whose size in bytes overflows int64, though its doc promises a runtime error for a view outside the storage: it returns a view of other memory (repro/as_strided_offset_overflow_unchecked.py)")
def offset_past_int64():
    return torch.as_strided(torch.arange(6.0), [2], [1], 1 << 62).tolist() == [0.0, 1.0]


@claim("as_strided.tensor.rank", "torch.as_strided takes tensors of any rank: a rank-0 input is a storage of one element, a rank-9 input is read as its storage, size [] gives a rank-0 view; ATB takes 1 to 8 dims")
def any_rank():
    return (
        torch.as_strided(torch.tensor(5.0), [2, 3], [0, 0], 0).shape == (2, 3)
        and torch.as_strided(torch.zeros([1] * 8 + [2]), [2], [1], 0).shape == (2,)
        and torch.as_strided(torch.arange(6.0), [], [], 0).dim() == 0
        and raises(lambda: torch.as_strided(torch.tensor(5.0), [2], [1], 0), "out of bounds for storage of size 4")
    )


@claim("as_strided.dtype.float16-int64", "torch.as_strided takes every dtype; ATB's AsStrided takes float16 and int64 only")
def every_dtype():
    return all(
        torch.as_strided(torch.zeros(3, dtype=d), [2], [1], 0).dtype == d
        for d in (torch.bool, torch.float32, torch.int8, torch.bfloat16, torch.int32, torch.uint8)
    )


@claim("as_strided.tensor.non-empty", "torch.as_strided checks only the view's reach: any view of an empty input is out of bounds for a storage of size 0 (out_of_bounds), where ATB rejects the empty input first (empty_dimension)")
def empty_input_out_of_bounds():
    return raises(lambda: torch.as_strided(torch.empty(2, 0), [1], [1], 0), "out of bounds for storage of size 0")


@claim("as_strided.size.count", "torch.as_strided takes a size of any length (9 entries give a rank-9 view); ATB takes at most 8")
def nine_sizes():
    return torch.as_strided(torch.arange(6.0), [1] * 9, [0] * 9, 0).dim() == 9


@claim("as_strided.size.positive", "torch.as_strided takes a size entry of 0 (an empty view); ATB requires every entry > 0")
def size_zero():
    return torch.as_strided(torch.arange(6.0), [2, 0], [1, 1], 0).shape == (2, 0)


@claim("reformat.dtype.formats", "torch's channels_last and channels_last_3d memory formats lay out tensors of every dtype; TensorRT's HWC takes float32 and uint8, DHWC float32 only")
def channels_last_of_any_dtype():
    return all(
        torch.zeros(1, 3, 1, 2, dtype=d).contiguous(memory_format=torch.channels_last).is_contiguous(memory_format=torch.channels_last)
        and torch.zeros(1, 3, 1, 1, 2, dtype=d).contiguous(memory_format=torch.channels_last_3d).is_contiguous(memory_format=torch.channels_last_3d)
        for d in (torch.bfloat16, torch.float16, torch.int8, torch.int32, torch.uint8)
    )


@claim("reformat.rank.max", "torch tensors have no rank limit of 8; TensorRT's is 8 dims")
@claim("scale.rank.max", "torch tensors have no rank limit of 8; TensorRT's is 8 dims")
@claim("shuffle.rank.max", "torch tensors have no rank limit of 8; TensorRT's is 8 dims")
@claim("slice.rank.max", "torch tensors have no rank limit of 8; TensorRT's is 8 dims")
def rank_nine():
    return (
        torch.zeros([1] * 8 + [2]).permute([8, 1, 2, 3, 4, 5, 6, 7, 0]).shape[0] == 2
        and torch.zeros(2, 2).reshape([1] * 7 + [2, 2]).dim() == 9
        and torch.zeros([1] * 7 + [2, 2]).narrow(8, 0, 2).dim() == 9
        and (torch.zeros([1] * 7 + [2, 2]) * torch.ones(2, 1, 1)).dim() == 9
    )


@claim("scale.channel-axis.spatial", "torch broadcasts the weights from the channel axis whatever number of dims follow it; TensorRT's Scale needs 2 or 3")
@claim("scale.rank.min-four", "torch's arithmetic takes inputs of any rank; IScaleLayer needs 4 dims or more")
def broadcasting():
    return (
        (torch.zeros(1, 1, 1, 2, 2) + torch.ones(2, 2)).shape == (1, 1, 1, 2, 2)
        and (torch.zeros(2, 1, 1, 1, 2) * torch.ones(2, 1, 1, 1, 1)).shape == (2, 1, 1, 1, 2)
        and (torch.zeros(1, 2, 2) * torch.tensor(2.0)).shape == (1, 2, 2)
    )


@claim("scale.dtype.input", "Tensor.to converts bool, int32, int64 and uint8 to float32 as any other type; IScaleLayer takes int8, float16, bfloat16 and float32 inputs only")
def to_float32_of_any_dtype():
    return all(torch.zeros(2, dtype=d).to(torch.float32).dtype == torch.float32 for d in (torch.bool, torch.int32, torch.int64, torch.uint8))


@claim("scale.dtype.output", "Tensor.to converts float32 to int32; IScaleLayer outputs int8, float16, bfloat16 or float32 only")
def to_int32():
    return torch.tensor([1.5]).to(torch.int32).tolist() == [1]


@claim("scale.int8.quantize", "torch.quantize_per_tensor gives -128 for +inf and for finite values past int64 (1e30, 3.4e38): it rounds to a 64-bit integer before it clamps (its doc gives no formula); TensorRT clamps first, to 127")
def quantize_past_int64():
    return shown("quantized +inf, 1e30, 3.4e38, NaN, -inf", torch.quantize_per_tensor(big, 1.0, 0, torch.qint8).int_repr().tolist()) == [-128, -128, -128, -128, -128]


@claim("shuffle.transpose.first-permutation", "torch's permute reads a negative dim from the back (-1 is the last axis); TensorRT's permutation takes 0..rank-1 only")
def negative_dim():
    return x23.permute([-1, 0]).shape == (3, 2)


@claim("shuffle.reshape.wildcard-indeterminate", "torch.reshape solves a -1 beside a 0 against the element count: a non-empty input is a volume mismatch (volume_mismatch), only an empty one is ambiguous; TensorRT rejects any -1 whose other dims multiply to 0 as indeterminate")
def wildcard_beside_zero():
    return (
        raises(lambda: x23.reshape([0, -1]), "shape '[0, -1]' is invalid for input of size 6")
        and raises(lambda: torch.zeros(0, 3).reshape([0, -1]), "can be any value and is ambiguous")
    )


@claim("slice.dtype.clamp-fill-reflect-exclude-int64-bf16", "torch's narrow, expand, flip and constant F.pad take bfloat16 and int64 (its replicate and reflect pads run float32 alone: other dtypes are answered unsupported, bfloat16 and int64 included); TensorRT's CLAMP, FILL and REFLECT take neither")
def int64_and_bfloat16():
    return all(
        x5.to(d).narrow(0, 1, 3).dtype == d and F.pad(x5.to(d), (1, 1), value=0).dtype == d and torch.flip(x5.to(d), [0]).dtype == d
        for d in (torch.bfloat16, torch.int64)
    ) and all(
        raises(lambda: F.pad(torch.zeros(1, 1, 3, dtype=d), (1, 1), mode=m), "not implemented for")
        for m in ("replicate", "reflect")
        for d in (torch.bool, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16)
    )


@claim("slice.fill.value", "F.pad takes its fill value as a Python number, which torch converts back to float16 as the canonical NaN 0x7e00: a NaN fill's payload is lost")
def nan_fill_payload():
    return shown("float16 NaN 0x7d01 fill, as bits", bits16(F.pad(torch.zeros(2, dtype=torch.float16), (1, 1), value=nan7d01.item()))[0]) == 0x7E00


@claim("slice.lengths.match", "torch indexing with fewer slices than dims slices the leading axes and keeps the others whole; TensorRT requires one entry per dim")
def leading_axes():
    return x23[0:1].shape == (1, 3)


@claim("slice.fill.not-scalar", "Tensor.item takes a one-element tensor of any shape ([1, 1] included); TensorRT takes a fill of shape [] or [1]")
def item_of_1x1():
    return torch.zeros(1, 1).item() == 0.0


@claim("slice.size.negative", "narrow reports a negative length as a span past the axis ('start (0) + length (-1) exceeds dimension size (3)', out_of_bounds), not as a negative size")
def narrow_negative_length():
    return raises(lambda: torch.zeros(3).narrow(0, 0, -1), "start (0) + length (-1) exceeds dimension size (3)")


@claim("slice.dtype.unlisted", "torch slices uint8 tensors; TensorRT's Slice does not list uint8")
def uint8():
    return torch.arange(3, dtype=torch.uint8).narrow(0, 0, 2).tolist() == [0, 1]


@claim("slice.fill.conversion", "F.pad converts any Python number to the input's type (a float32 fill into bool, an int32 fill into float32); TensorRT converts a fill only among float32, float16, int8 and fp8")
def fill_of_any_number():
    return (
        F.pad(torch.zeros(2, dtype=torch.bool), (1, 0), value=0.5).tolist() == [True, False, False]
        and F.pad(torch.zeros(2), (1, 0), value=int(7)).tolist() == [7.0, 0.0, 0.0]
    )


@claim("slice.strict.out-of-bounds", "narrow reads a negative start from the back (start -1 is the last element), where STRICT_BOUNDS rejects a coordinate below 0")
def narrow_negative_start():
    return x5.narrow(0, -1, 1).tolist() == [4.0] and x5.narrow(0, -4, 4).tolist() == [1.0, 2.0, 3.0, 4.0]


def main():
    header = lambda: f"torch {torch.__version__}, Python {platform.python_version()}, {platform.machine()}"  # noqa: E731
    return CLAIMS.run(header, os.path.join(os.path.dirname(os.path.abspath(__file__)), "known-failures.txt"))


if __name__ == "__main__":
    sys.exit(main())
