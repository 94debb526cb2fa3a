"""Chunks of 32 per thread, 256-thread blocks; the chunk totals are scanned by the same plan."""

CHUNK = 32


def launch(gpu, x, y, n):
    _scan(gpu, x, y, n)


def _scan(gpu, x, y, n):
    chunks = gpu.cdiv(n, CHUNK)
    blocks = gpu.cdiv(chunks, 256)
    if chunks == 1:
        gpu.launch("chunk_scan", grid=1, block=256, args=(x, y, x, n))  # t = 0 never reads `scanned`
        return
    sums = gpu.empty(chunks, "int32")
    gpu.launch("chunk_sums", grid=blocks, block=256, args=(x, sums, n))
    _scan(gpu, sums, sums, chunks)
    gpu.launch("chunk_scan", grid=blocks, block=256, args=(x, y, sums, n))
