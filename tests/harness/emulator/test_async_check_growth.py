"""The cp.async observer's shadow arrays grow along the axis that is short: one block whose copies
land at ever higher shared words keeps one row (it once doubled the rows on each growth, 2.4 GiB
for one Triton matmul block)."""
from harness.emulator.async_check import AsyncCopyCheck


def test_one_block_growing_its_words_keeps_one_row():
    check = AsyncCopyCheck()
    check.on_kernel_start(None, (1, 1, 1), (128, 1, 1), 0)
    for words in (64, 200, 1000, 5000, 20000, 60000):
        assert check._row(0, words) == 0
    rows, cols = check._count.shape
    assert rows <= 2 and cols >= 60000


def test_more_blocks_add_rows():
    check = AsyncCopyCheck()
    check.on_kernel_start(None, (4, 1, 1), (128, 1, 1), 0)
    assert [check._row(b, 64) for b in range(4)] == [0, 1, 2, 3]
    assert check._count.shape[0] >= 4
