"""DeepMimic.py caps the BLAS threads before numpy is first imported, as DeepMimic_Optimizer.py
does; the viewer grabs bodies only in scenes that simulate a character."""
import subprocess
import sys

from app.build import load_world
from app.viewer import Viewer
from util.paths import project_root

PROBE = """
import os, sys
os.environ.pop("OPENBLAS_NUM_THREADS", None)
seen = []

class NumpyProbe:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))

sys.meta_path.insert(0, NumpyProbe())
import DeepMimic
print(seen[0] if seen else "numpy not imported")
"""


def test_deepmimic_caps_blas_threads_before_numpy():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=project_root(), capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "1"


def test_left_drag_on_a_kinematic_character_orbits():
    viewer = Viewer(lambda: load_world(["--arg_file", "args/kin_char_args.txt"]), 800, 450)
    (x, y), _ = viewer.camera.project(viewer.scene.draw_characters()[0][1][1])   # on the chest
    viewer.mouse_button("left", True, x, y)
    assert viewer.drag == ("orbit",)
    viewer.world.shutdown()
