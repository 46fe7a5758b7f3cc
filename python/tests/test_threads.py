"""run releases the GIL: Python threads run one session concurrently."""
import threading

import numpy as np

import ephost
from conftest import binary_model

THREADS = 4


def test_runs_from_python_threads_overlap(test_plugins):
    # alpha's rendezvous option makes each compute wait until THREADS computes are in flight at once
    # (failing after 20 s): it passes only when the runs really overlap, i.e. the GIL was released.
    session = ephost.InferenceSession(binary_model("Add"), providers=[("alpha", {"rendezvous": str(THREADS)})])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    results, errors = [None] * THREADS, []

    def run(i):
        try:
            results[i] = session.run(None, {"x": x, "y": x + i})[0]
        except Exception as e:  # reported below, with the thread
            errors.append((i, e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r, x + x + i)


def test_many_threads_get_their_own_results(rng):
    session = ephost.InferenceSession(binary_model("Mul"))
    inputs = [rng.standard_normal((64, 3), dtype=np.float32) for _ in range(8)]
    outputs = [None] * len(inputs)

    def run(i):
        for _ in range(20):
            outputs[i] = session.run(None, {"x": inputs[i], "y": inputs[i]})[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, z in zip(inputs, outputs):
        np.testing.assert_array_equal(z, x * x)
