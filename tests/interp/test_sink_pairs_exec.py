"""The sink `_` as a half of a `d|p` pair (issue 14, item 1) runs on every CPU executor:
`lop3.BoolOp _|p` (§9.7.8.6: p = (d != 0) BoolOp q, d discarded), `setp _|q` (§9.7.6.2:
the second destination is the complement, combined with c), `setp p|_`, `shfl.sync d|_`
(§9.7.9.6). Expected values are worked out by hand from the ISA text, one per row."""

from __future__ import annotations

import pytest

from models.lanes import run_lanes

B32 = 0xFFFFFFFF

# (a, b, c, q) and the hand-computed lop3 result with table 0x80 (a & b & c).
LOP_ROWS = [
    (0xF, 0x3, 0x1, 1),     # d = 0x1 (nonzero)
    (0xF, 0x3, 0x1, 0),     # d = 0x1
    (0xF0, 0x0F, B32, 1),   # d = 0
    (0xF0, 0x0F, B32, 0),   # d = 0
    (B32, B32, 0x80000000, 1),  # d = 0x80000000
]
LOP_WANT = {"and": [1, 0, 0, 0, 1], "or": [1, 1, 1, 0, 1]}


@pytest.mark.parametrize("op", ["and", "or"])
def test_lop3_boolop_sink_pred(op, executor) -> None:
    a, b, c, q = (list(col) for col in zip(*LOP_ROWS))
    (p,) = run_lanes(f"lop3.{op}.b32 _|%p, %a, %b, %c, 0x80, %q;",
                     [("%a", "b32"), ("%b", "b32"), ("%c", "b32"), ("%q", "pred")],
                     [("%p", "pred")], [a, b, c, q], executor)
    assert [int(x) for x in p] == LOP_WANT[op]


def test_lop3_boolop_sink_pred_negated_q(executor) -> None:
    a, b, c, q = (list(col) for col in zip(*LOP_ROWS))
    (p,) = run_lanes("lop3.and.b32 _|%p, %a, %b, %c, 0x80, !%q;",
                     [("%a", "b32"), ("%b", "b32"), ("%c", "b32"), ("%q", "pred")],
                     [("%p", "pred")], [a, b, c, q], executor)
    assert [int(x) for x in p] == [0, 1, 0, 0, 0]


# setp.lt.s32 with a, b (as signed 32-bit) and c.
SETP_A = [1, 5, (-3) & B32, 7, 0]
SETP_B = [2, 5, 4, (-1) & B32, 0]
SETP_C = [1, 1, 0, 1, 0]
LT = [1, 0, 1, 0, 0]                      # 1<2, 5<5, -3<4, 7<-1, 0<0


def test_setp_sink_first(executor) -> None:
    (q,) = run_lanes("setp.lt.s32 _|%q, %a, %b;", [("%a", "b32"), ("%b", "b32")],
                     [("%q", "pred")], [SETP_A, SETP_B], executor)
    assert [int(x) for x in q] == [0, 1, 0, 1, 1]          # the complement of LT


def test_setp_and_sink_first(executor) -> None:
    (q,) = run_lanes("setp.lt.and.s32 _|%q, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "pred")],
                     [("%q", "pred")], [SETP_A, SETP_B, SETP_C], executor)
    assert [int(x) for x in q] == [0, 1, 0, 1, 0]          # !LT and c


def test_setp_sink_second(executor) -> None:
    (p,) = run_lanes("setp.lt.and.s32 %p|_, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "pred")],
                     [("%p", "pred")], [SETP_A, SETP_B, SETP_C], executor)
    assert [int(x) for x in p] == [1, 0, 0, 0, 0]          # LT and c


def test_shfl_sync_up_sink_pred(executor) -> None:
    n = 64                                     # two warps: lane 0 of each keeps its own value
    a = [100 + i for i in range(n)]
    (d,) = run_lanes("shfl.sync.up.b32 %d|_, %a, 1, 0, -1;", [("%a", "b32")], [("%d", "b32")], [a], executor)
    want = [100, *range(100, 131), 132, *range(132, 163)]
    assert [int(x) for x in d] == want


def test_add_reg_sink_is_the_plain_add(executor) -> None:
    (d,) = run_lanes("add.u32 %d|_, %a, %b;", [("%a", "b32"), ("%b", "b32")], [("%d", "b32")],
                     [[1, B32], [2, 3]], executor)
    assert [int(x) for x in d] == [3, 2]
