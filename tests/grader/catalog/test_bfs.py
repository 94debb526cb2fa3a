"""The bfs kata's reference: every generator's edge count, and distances equal to a plain queue BFS."""
from collections import deque

import numpy as np
import pytest

from grader import catalog


@pytest.fixture(scope="module")
def kata():
    return catalog.load("bfs")


def _queue_bfs(inputs, n):
    row_ptr, col_idx = inputs["row_ptr"], inputs["col_idx"]
    dist = [-1] * n
    dist[inputs["source"]] = 0
    queue = deque([inputs["source"]])
    while queue:
        v = queue.popleft()
        for u in col_idx[row_ptr[v]:row_ptr[v + 1]]:
            if dist[u] == -1:
                dist[u] = dist[v] + 1
                queue.append(u)
    return np.array(dist, np.int32)


@pytest.mark.parametrize("graph", ["rmat", "uniform", "grid", "path", "components"])
@pytest.mark.parametrize("n", [1, 2, 600])
def test_reference_matches_queue_bfs(kata, graph, n):
    ref = kata.reference
    inputs = ref.generate(np.random.default_rng(11), n=n, graph=graph, degree=4)
    assert inputs["row_ptr"].dtype == np.int32 and inputs["row_ptr"].size == n + 1
    assert inputs["row_ptr"][-1] == inputs["m"] == inputs["col_idx"].size == ref.edge_count(n, graph, 4)
    dist = ref.reference(inputs, n=n)["dist"]
    assert np.array_equal(dist, _queue_bfs(inputs, n))


def test_hostile_shapes(kata):
    ref = kata.reference
    path = ref.reference(ref.generate(np.random.default_rng(0), n=2000, graph="path", degree=2), n=2000)["dist"]
    assert path.max() >= 400  # hundreds of levels
    parts = ref.reference(ref.generate(np.random.default_rng(0), n=300, graph="components", degree=4), n=300)["dist"]
    assert (parts == -1).any() and (parts > 0).any()  # reachable and unreachable vertices
    rmat = ref.generate(np.random.default_rng(0), n=2000, graph="rmat", degree=8)
    degrees = np.diff(rmat["row_ptr"])
    assert degrees.max() > 20 * degrees.mean()  # hubs


def test_cost_counts_edges(kata):
    assert kata.reference.cost(n=4194304, m=67108864)["edges"] == 67108864
    assert kata.reference.edge_count(4194304, "rmat", 16) == 67108864
