"""The controller files: shipped values and one-line errors."""
import json

import numpy as np
import pytest

from env.anim.character import CharacterDesc
from env.sim.ctrl_params import CtrlParams

CTRL_2021 = "data/controllers/humanoid3d_ctrl.txt"


@pytest.fixture(scope="module")
def desc():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


def test_shipped_files(desc):
    params = CtrlParams.load(CTRL_2021, desc)
    assert (params.layout, params.query_rate, params.pd_mode) == ("2021", 30.0, "tree")
    assert params.enable_phase_input and params.record_world_root_rot and not params.record_world_root_pos
    # deepmimic.md section 7: chest 1000/100, neck 100/10, hips and knees 500/50, ankles and
    # shoulders 400/40, elbows 300/30, root and wrists 0
    assert list(params.kp) == [0, 1000, 100, 500, 500, 400, 400, 300, 0, 500, 500, 400, 400, 300, 0]
    assert np.allclose(params.kd, params.kp / 10)
    old = CtrlParams.load("data/controllers/humanoid3d_ctrl_2018.txt", desc)
    assert old.layout == "2018" and not old.record_world_root_rot
    assert old.axis_angle_lim[1] == (-1.2, 1.2) and sorted(old.axis_angle_lim) == [1, 2, 3, 5, 6, 9, 11, 12]


@pytest.mark.parametrize("change, message", [
    ({"Speed": 1}, "key 'Speed' is unknown"),
    ({"PDMode": "fast"}, "key 'PDMode' is 'fast', expected one of builtin, exact"),
    ({"Layout": "2019"}, "key 'Layout' is '2019'"),
    ({"QueryRate": True}, "key 'QueryRate' has value True of the wrong type"),
    ({"Layout": "2018"}, r"key 'PDControllers\[1\].AxisAngleLim' is None, expected \[low, high\]"),
])
def test_errors_name_the_file_and_key(tmp_path, desc, change, message):
    ctrl = json.loads(open(CTRL_2021).read())
    ctrl.update(change)
    path = tmp_path / "ctrl.txt"
    path.write_text(json.dumps(ctrl))
    with pytest.raises(ValueError, match=message) as err:
        CtrlParams.load(path, desc)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_gain_entries_checked(tmp_path, desc):
    ctrl = json.loads(open(CTRL_2021).read())
    ctrl["PDControllers"][3]["Kp"] = -5
    path = tmp_path / "ctrl.txt"
    path.write_text(json.dumps(ctrl))
    with pytest.raises(ValueError, match=r"PDControllers\[3\].Kp' is -5, expected a number >= 0"):
        CtrlParams.load(path, desc)
    ctrl["PDControllers"] = ctrl["PDControllers"][:-1]
    path.write_text(json.dumps(ctrl))
    with pytest.raises(ValueError, match="has 14 entries for 15 joints"):
        CtrlParams.load(path, desc)
