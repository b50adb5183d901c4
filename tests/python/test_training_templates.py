"""The GPU training templates (examples/*/input_gpu.json) name data that exist: every training
system is a folder of examples/data (or one examples/train_on_gpu.sh splits off), and the
auto_prob blocks cover, back to back, exactly the systems DeePMD-kit will find in them (it
expands each folder into the folders below it that hold a type.raw, in sorted order)."""
import json
import os

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "examples", "data")
# folders train_on_gpu.sh makes with split_deepmd_data.py, and the data they come from
SPLITS = {"water_192_train": "water_192", "protein_train": "protein_fragments"}
TEMPLATES = ["examples/water/input_gpu.json", "examples/protein/input_gpu.json"]


def systems_in(folder):
    found = [d for d, _, files in os.walk(folder) if "type.raw" in files]
    assert found, f"{folder}: no DeePMD-kit system (type.raw) in it"
    return len(found)


def auto_prob_blocks(text):
    head, *blocks = text.split(";")
    assert head == "prob_sys_size", text
    return [tuple(float(v) if i == 2 else int(v) for i, v in enumerate(b.split(":")))
            for b in blocks]


@pytest.mark.parametrize("template", TEMPLATES)
def test_template_data_and_weights(template):
    with open(os.path.join(ROOT, template)) as f:
        data = json.load(f)["training"]["training_data"]
    counts = []
    for path in data["systems"]:
        name = os.path.basename(path)
        counts.append(systems_in(os.path.join(DATA, SPLITS.get(name, name))))
    if "auto_prob" not in data:
        return
    blocks = auto_prob_blocks(data["auto_prob"])
    assert blocks[0][0] == 0 and blocks[-1][1] == sum(counts), (blocks, counts)
    for (_, end, _), (start, _, _) in zip(blocks, blocks[1:]):
        assert end == start, blocks
    # each block is whole folders of the template, so the weights mean what the comment says
    edges = {0}
    for c in counts:
        edges.add(max(edges) + c)
    assert all(b[0] in edges and b[1] in edges and b[2] > 0 for b in blocks), (blocks, counts)


def test_train_script_copies_the_template_data():
    with open(os.path.join(ROOT, "examples", "train_on_gpu.sh")) as f:
        script = f.read()
    for template in TEMPLATES:
        with open(os.path.join(ROOT, template)) as f:
            systems = json.load(f)["training"]["training_data"]["systems"]
        for path in systems:
            name = os.path.basename(path)
            if name not in SPLITS:
                assert f"examples/data/{name}" in script, f"train_on_gpu.sh does not copy {name}"
