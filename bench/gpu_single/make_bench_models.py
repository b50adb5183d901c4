#!/usr/bin/env python3
"""Builds the DPA-1 benchmark model with DeePMD-kit (PyTorch backend): the 1.6M-parameter
configuration of tests/data/models/dpa1_1p6m_fp32.dp (DeePMD-kit's se_atten water example with
neuron [64, 128, 256], attn 256, 2 attention layers, fitting [240, 240, 240]) with the elements
of examples/protein/protein.gro (H C N O S Na Cl), in float64, random weights (seeded), default
statistics: a model for timing, not for physics. Converted to .dp with `dp convert-backend`.

    PYTHONPATH=.gpudeps/py python3 bench/gpu_single/make_bench_models.py OUT_DIR

Writes OUT_DIR/protein_dpa1_1p6m.dp (13 MB; made where it is used, not committed).
"""
import json
import os
import sys


def config():
    return {
        "type_map": ["H", "C", "N", "O", "S", "Na", "Cl"],
        "descriptor": {"type": "dpa1", "sel": 120, "rcut_smth": 0.5, "rcut": 6.0,
                       "neuron": [64, 128, 256], "tebd_dim": 8, "axis_neuron": 16,
                       "type_one_side": True, "attn": 256, "attn_layer": 2, "attn_dotr": True,
                       "attn_mask": False, "activation_function": "tanh", "scaling_factor": 1.0,
                       "normalize": True, "temperature": 1.0, "precision": "float64",
                       "seed": 21},
        "fitting_net": {"neuron": [240, 240, 240], "resnet_dt": True, "precision": "float64",
                        "seed": 22},
    }


def main(out_dir):
    import torch
    from deepmd.entrypoints.convert_backend import convert_backend
    from deepmd.pt.model.model import get_model
    from deepmd.utils.argcheck import normalize

    os.makedirs(out_dir, exist_ok=True)
    cfg = normalize({"model": config(), "training": {"training_data": {"systems": ["."]},
                                                     "numb_steps": 1}})["model"]
    torch.manual_seed(21)
    model = get_model(cfg).to("cpu")
    model.model_def_script = json.dumps(cfg)
    model.eval()
    nparams = sum(p.numel() for p in model.parameters())
    pth = os.path.join(out_dir, "protein_dpa1_1p6m.pth")
    torch.jit.save(torch.jit.script(model), pth, {"data_modifier.pth": ""})
    dp = os.path.join(out_dir, "protein_dpa1_1p6m.dp")
    convert_backend(INPUT=pth, OUTPUT=dp)
    print(f"{dp}: {nparams} parameters")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
