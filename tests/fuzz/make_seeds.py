#!/usr/bin/python3
"""Writes the seed corpora of the fuzz harnesses (tests/fuzz/README.md) into SEEDS_DIR/<harness>/.

    /usr/bin/python3 tests/fuzz/make_seeds.py SEEDS_DIR NODE_TESTS_DIR MODELS_DIR EPHOST TEST_PLUGIN_DIR EXAMPLE_EP_DIR

Sources: the ONNX node test cases (models, and their input_N.pb / output_N.pb files), the PP-OCR
classifier (the smallest real model), ctx models compiled by `ephost compile` with the example EP
(ctx model, binary and source model packed as fuzz_context_model reads them), their binaries, and
plugin registry files written by `ephost plugins` over good and broken test plugins. Run with
Debian's /usr/bin/python3 (python3-onnx)."""
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Node cases the example EP compiles (it claims these ops), for ctx model seeds.
EXAMPLE_CASES = ["test_add", "test_add_bcast", "test_mul", "test_sub", "test_div", "test_relu", "test_sigmoid",
                 "test_conv_with_strides_padding", "test_flatten_axis1", "test_clip", "test_batchnorm_example"]


def copy_into(dst, files, prefix=""):
    os.makedirs(dst, exist_ok=True)
    for i, f in enumerate(files):
        shutil.copyfile(f, os.path.join(dst, f"{prefix}{i:04d}-{os.path.basename(f)}"))


def model_seeds(seeds, node_dir, models_dir):
    models = sorted(glob.glob(os.path.join(node_dir, "*", "model.onnx")))
    copy_into(os.path.join(seeds, "fuzz_model"), models)
    cls = glob.glob(os.path.join(models_dir, "**", "ch_ppocr_mobile_v2.0_cls_infer.onnx"), recursive=True)
    copy_into(os.path.join(seeds, "fuzz_model"), cls, prefix="real-")
    return len(models) + len(cls)


def value_seeds(seeds, node_dir):
    files = sorted(glob.glob(os.path.join(node_dir, "*", "test_data_set_*", "*.pb")))
    dst = os.path.join(seeds, "fuzz_input_pb")
    copy_into(dst, files)
    # External data in the case folder (fuzz_input_pb writes data.bin beside the file it reads).
    t = TensorProto()
    t.name = "x"
    t.data_type = TensorProto.FLOAT
    t.dims.append(4)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "data.bin"), ("offset", "16"), ("length", "16")):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    with open(os.path.join(dst, "external-data.pb"), "wb") as f:
        f.write(t.SerializeToString())
    return len(files) + 1


def compile_seeds(seeds, node_dir, ephost, example_dir):
    """ctx model + binary + source model from `ephost compile`, in both embed modes."""
    ctx_dst = os.path.join(seeds, "fuzz_context_model")
    bin_dst = os.path.join(seeds, "fuzz_context_binary")
    os.makedirs(ctx_dst, exist_ok=True)
    os.makedirs(bin_dst, exist_ok=True)
    count = 0
    env = dict(os.environ, EPHOST_PLUGIN_PATH=example_dir, EPHOST_PLUGIN_REGISTRY="")
    for case in EXAMPLE_CASES:
        source = os.path.join(node_dir, case, "model.onnx")
        if not os.path.exists(source):
            continue
        for embed in (False, True):
            with tempfile.TemporaryDirectory() as work:
                shutil.copyfile(source, os.path.join(work, "model.onnx"))
                cmd = [ephost, "compile", os.path.join(work, "model.onnx"), "--providers", "example"]
                if embed:
                    cmd.append("--embed")
                if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
                    continue
                ctx = open(os.path.join(work, "model_ctx.onnx"), "rb").read()
                bins = glob.glob(os.path.join(work, "*.bin"))
                binary = open(bins[0], "rb").read() if bins else b""
                src = open(source, "rb").read()
                name = f"{case}-{'embed' if embed else 'file'}"
                with open(os.path.join(ctx_dst, name), "wb") as f:
                    f.write(struct.pack("<I", len(ctx)) + ctx + struct.pack("<I", len(binary)) + binary + src)
                if binary:
                    with open(os.path.join(bin_dst, name + ".bin"), "wb") as f:
                        f.write(binary)
                count += 1
    with open(os.path.join(bin_dst, "raw-payload"), "wb") as f:
        f.write(b"not a container: a plugin's own format" * 4)
    return count


def registry_seeds(seeds, ephost, plugin_dir):
    dst = os.path.join(seeds, "fuzz_registry")
    os.makedirs(dst, exist_ok=True)
    sets = [["ephost_test_alpha"], ["ephost_test_alpha", "ephost_test_beta", "ephost_broken_refuses"],
            ["ephost_broken_negotiate_segfault", "ephost_broken_negotiate_sleep", "ephost_broken_bad_name"]]
    for i, plugins in enumerate(sets):
        with tempfile.TemporaryDirectory() as work:
            for p in plugins:
                shutil.copyfile(os.path.join(plugin_dir, f"lib{p}.so"), os.path.join(work, f"lib{p}.so"))
            registry = os.path.join(work, "registry.json")
            env = dict(os.environ, EPHOST_PLUGIN_PATH=work, EPHOST_PLUGIN_REGISTRY=registry,
                       EPHOST_PLUGIN_SCAN_TIMEOUT_MS="1000")
            subprocess.run([ephost, "plugins"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if os.path.exists(registry):
                shutil.copyfile(registry, os.path.join(dst, f"registry-{i}.json"))
    return len(os.listdir(dst))


def main():
    seeds, node_dir, models_dir, ephost, plugin_dir, example_dir = sys.argv[1:7]
    counts = {
        "fuzz_model": model_seeds(seeds, node_dir, models_dir),
        "fuzz_input_pb": value_seeds(seeds, node_dir),
        "fuzz_context_model": compile_seeds(seeds, node_dir, ephost, example_dir),
        "fuzz_registry": registry_seeds(seeds, ephost, plugin_dir),
    }
    for harness, n in counts.items():
        print(f"make_seeds: {harness}: {n} seeds")


if __name__ == "__main__":
    main()
