#!/usr/bin/python3
"""Every claim of known-failures.txt about torch, shown on torch directly (no adapter): each
entry's smallest torch program, and what the entry says torch does. Run with the interpreter of
engine.toml; exit 0 when every claim holds, 1 when one does not (torch changed: update
known-failures.txt). AsStrided's clauses are replayed one by one by check_as_strided.py."""

import platform
import sys

import torch
import torch.nn.functional as F


def raises(call, text):
    try:
        call()
    except (RuntimeError, IndexError, ValueError) as e:
        return text in str(e)
    return False


def bits16(t):
    return t.view(torch.int16).tolist()


x5 = torch.arange(5.0)
x23 = torch.arange(6.0).reshape(2, 3)
big = torch.tensor([float("inf"), 1e30, 3.4e38, float("nan"), -float("inf")])
nan7d01 = torch.tensor([0x7D01], dtype=torch.int16).view(torch.float16)

CLAIMS = [
    # as_strided
    ("as_strided.bounds.reach (defect)", lambda: torch.as_strided(torch.arange(6.0), [2], [1], 1 << 62).tolist() == [0.0, 1.0]),
    ("as_strided.tensor.rank: any rank", lambda: torch.as_strided(torch.tensor(5.0), [2, 3], [0, 0], 0).shape == (2, 3)
        and torch.as_strided(torch.zeros([1] * 8 + [2]), [2], [1], 0).shape == (2,)
        and torch.as_strided(torch.arange(6.0), [], [], 0).dim() == 0
        and raises(lambda: torch.as_strided(torch.tensor(5.0), [2], [1], 0), "out of bounds for storage of size 4")),
    ("as_strided.dtype.float16-int64: every dtype", lambda: all(
        torch.as_strided(torch.zeros(3, dtype=d), [2], [1], 0).dtype == d
        for d in (torch.bool, torch.float32, torch.int8, torch.bfloat16, torch.int32, torch.uint8))),
    ("as_strided.tensor.non-empty: out of bounds, not empty", lambda: raises(lambda: torch.as_strided(torch.empty(2, 0), [1], [1], 0), "out of bounds for storage of size 0")),
    ("as_strided.size.count: 9 sizes", lambda: torch.as_strided(torch.arange(6.0), [1] * 9, [0] * 9, 0).dim() == 9),
    ("as_strided.size.positive: size 0", lambda: torch.as_strided(torch.arange(6.0), [2, 0], [1, 1], 0).shape == (2, 0)),
    # reformat
    ("reformat.dtype.formats: channels_last of any dtype", lambda: all(
        torch.zeros(1, 3, 1, 2, dtype=d).contiguous(memory_format=torch.channels_last).is_contiguous(memory_format=torch.channels_last)
        and torch.zeros(1, 3, 1, 1, 2, dtype=d).contiguous(memory_format=torch.channels_last_3d).is_contiguous(memory_format=torch.channels_last_3d)
        for d in (torch.bfloat16, torch.float16, torch.int8, torch.int32, torch.uint8))),
    ("*.rank.max: rank 9", lambda: torch.zeros([1] * 8 + [2]).permute([8, 1, 2, 3, 4, 5, 6, 7, 0]).shape[0] == 2
        and torch.zeros(2, 2).reshape([1] * 7 + [2, 2]).dim() == 9
        and torch.zeros([1] * 7 + [2, 2]).narrow(8, 0, 2).dim() == 9
        and (torch.zeros([1] * 7 + [2, 2]) * torch.ones(2, 1, 1)).dim() == 9),
    # scale
    ("scale.channel-axis.spatial / rank.min-four: broadcasting", lambda: (torch.zeros(1, 1, 1, 2, 2) + torch.ones(2, 2)).shape == (1, 1, 1, 2, 2)
        and (torch.zeros(2, 1, 1, 1, 2) * torch.ones(2, 1, 1, 1, 1)).shape == (2, 1, 1, 1, 2)
        and (torch.zeros(1, 2, 2) * torch.tensor(2.0)).shape == (1, 2, 2)),
    ("scale.dtype.input: to(float32) of any dtype", lambda: all(torch.zeros(2, dtype=d).to(torch.float32).dtype == torch.float32 for d in (torch.bool, torch.int32, torch.int64, torch.uint8))),
    ("scale.dtype.output: to(int32)", lambda: torch.tensor([1.5]).to(torch.int32).tolist() == [1]),
    ("scale.int8.quantize: +inf, 1e30, 3.4e38 and NaN to -128", lambda: torch.quantize_per_tensor(big, 1.0, 0, torch.qint8).int_repr().tolist() == [-128, -128, -128, -128, -128]),
    # shuffle
    ("shuffle.transpose.first-permutation: negative dim", lambda: x23.permute([-1, 0]).shape == (3, 2)),
    ("shuffle.reshape.wildcard-indeterminate", lambda: raises(lambda: x23.reshape([0, -1]), "shape '[0, -1]' is invalid for input of size 6")
        and raises(lambda: torch.zeros(0, 3).reshape([0, -1]), "can be any value and is ambiguous")),
    # slice
    ("slice.dtype.clamp-fill-reflect-exclude-int64-bf16", lambda: all(
        x5.to(d).narrow(0, 1, 3).dtype == d and F.pad(x5.to(d), (1, 1), value=0).dtype == d and torch.flip(x5.to(d), [0]).dtype == d
        for d in (torch.bfloat16, torch.int64))
        and all(raises(lambda: F.pad(torch.zeros(1, 1, 3, dtype=d), (1, 1), mode=m), "not implemented for")
                for m in ("replicate", "reflect") for d in (torch.bool, torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16))),
    ("slice.fill.value: float16 NaN fill through F.pad", lambda: bits16(F.pad(torch.zeros(2, dtype=torch.float16), (1, 1), value=nan7d01.item()))[0] == 0x7E00),
    ("slice.lengths.match: leading axes", lambda: x23[0:1].shape == (1, 3)),
    ("slice.fill.not-scalar: item of [1, 1]", lambda: torch.zeros(1, 1).item() == 0.0),
    ("slice.size.negative: narrow", lambda: raises(lambda: torch.zeros(3).narrow(0, 0, -1), "start (0) + length (-1) exceeds dimension size (3)")),
    ("slice.dtype.unlisted: uint8", lambda: torch.arange(3, dtype=torch.uint8).narrow(0, 0, 2).tolist() == [0, 1]),
    ("slice.fill.conversion", lambda: F.pad(torch.zeros(2, dtype=torch.bool), (1, 0), value=0.5).tolist() == [True, False, False]
        and F.pad(torch.zeros(2), (1, 0), value=int(7)).tolist() == [7.0, 0.0, 0.0]),
    ("slice.strict.out-of-bounds: narrow reads a negative start from the back", lambda: x5.narrow(0, -1, 1).tolist() == [4.0] and x5.narrow(0, -4, 4).tolist() == [1.0, 2.0, 3.0, 4.0]),
]


def main():
    print(f"torch {torch.__version__} on {platform.machine()}")
    wrong = 0
    for name, claim in CLAIMS:
        try:
            ok = bool(claim())
        except Exception as e:  # noqa: BLE001
            ok = False
            name += f" ({type(e).__name__}: {e})"
        wrong += not ok
        print(f"{'holds ' if ok else 'FAILS '} {name}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
