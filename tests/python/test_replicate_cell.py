"""examples/water/replicate_cell.py: boxes of whole numbers of the committed 512-molecule cell.

The expected box is the committed water_12288.gro, written by make_water.py -n 4096 (numpy), which
replicates the same cell 2x2x2: every atom line and the box line must be the same."""
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "examples", "water", "replicate_cell.py")


def test_12288_is_make_waters_box(tmp_path):
    gro, top = tmp_path / "w.gro", tmp_path / "w.top"
    subprocess.run([sys.executable, SCRIPT, "12288", str(gro), str(top)], check=True)
    ours = gro.read_text().split("\n")
    committed = open(os.path.join(ROOT, "examples", "water", "water_12288.gro")).read().split("\n")
    assert ours[1:] == committed[1:]
    assert "SOL 4096" in top.read_text()


def test_24576_is_4x2x2(tmp_path):
    gro = tmp_path / "w.gro"
    subprocess.run([sys.executable, SCRIPT, "24576", str(gro)], check=True)
    lines = gro.read_text().split("\n")
    cell = open(os.path.join(ROOT, "examples", "water", "water_1536.gro")).read().split("\n")
    box, cell_box = [float(v) for v in lines[24578].split()], [float(v) for v in cell[1538].split()]
    assert int(lines[1]) == 24576
    assert box == [round(4 * cell_box[0], 5), round(2 * cell_box[1], 5), round(2 * cell_box[2], 5)]


def test_other_count_is_refused(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, "3000", str(tmp_path / "w.gro")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "3000" in r.stderr
    assert not (tmp_path / "w.gro").exists()
