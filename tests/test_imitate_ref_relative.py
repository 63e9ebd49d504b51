"""Imitate's opt-in --ref_relative_actions (the action is an offset from the reference pose at the
next decision) and --pose_termination_dist (a body too far from the reference is a fall)."""
import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.sim.ct_action import ExpMapAction
from util import math_util
from util.arg_parser import load_args

WALK_ARGS = "args/train_humanoid3d_walk_args.txt"
RIGHT_HIP = 3


def make_env(*extra):
    return DeepMimicEnv(load_args(["--arg_file", WALK_ARGS, "--rand_seed", "5", *extra]))


@pytest.fixture()
def env():
    env = make_env("--ref_relative_actions", "true")
    yield env
    env.shutdown()


def ref_targets_at(scene, time):
    pose = scene.motion.calc_frame(time)
    return pose[scene.reward_fn.sph_cols], pose[scene.reward_fn.rev_cols]


def test_normalisation_is_centred_on_the_reference(env):
    absolute = ExpMapAction(env.char_desc)
    np.testing.assert_array_equal(env.build_action_offset(0), np.zeros(28))
    np.testing.assert_array_equal(env.build_action_scale(0), absolute.scale)
    np.testing.assert_allclose(env.build_action_bound_max(0), -env.build_action_bound_min(0))
    half = 0.5 * (absolute.bound_max - absolute.bound_min)
    np.testing.assert_allclose(env.build_action_bound_max(0), half)


def test_zero_action_targets_the_next_decisions_reference(env):
    scene = env
    env.set_action(0, np.zeros(28))
    sph, rev = ref_targets_at(scene, scene.kin_char.time + 1 / 30)
    np.testing.assert_allclose(scene.ctrl.action, scene.ctrl.action_layout.from_targets(sph, rev), atol=1e-12)


def test_an_offset_composes_after_the_reference(env):
    scene = env
    rng = np.random.default_rng(0)
    action = rng.normal(scale=0.3, size=28)
    env.set_action(0, action)
    sph, rev = ref_targets_at(scene, scene.kin_char.time + 1 / 30)
    layout = scene.ctrl.action_layout
    off_sph, off_rev = layout.to_targets(action)
    expected = layout.from_targets(math_util.quat_mul(sph, off_sph), rev + off_rev)
    np.testing.assert_allclose(scene.ctrl.action, expected, atol=1e-12)
    # the right hip's target is its reference rotation followed by the offset's rotation
    k = [j.id for j in layout.sph_joints].index(RIGHT_HIP)
    hip_cols = layout.sph_cols[k]
    q_target = math_util.quat_from_exp_map(scene.ctrl.action[hip_cols])
    q_expected = math_util.quat_mul(sph[k], math_util.quat_from_exp_map(action[hip_cols]))
    assert abs(abs(np.dot(q_target, q_expected)) - 1) < 1e-12


def test_reference_action_round_trip(env):
    """calc_ref_action is the relative action whose targets are the reference's current pose."""
    scene = env
    env.set_action(0, scene.calc_ref_action())
    scene._pose_kin()
    sph, rev = ref_targets_at(scene, scene.kin_char.time)
    np.testing.assert_allclose(scene.ctrl.action, scene.ctrl.action_layout.from_targets(sph, rev), atol=1e-10)


def bend_hip(scene, angle):
    scene._pose_kin()
    pose, vel = scene.kin_char.pose.copy(), scene.kin_char.vel.copy()
    o = scene.char_desc.param_offset[RIGHT_HIP]
    pose[o:o + 4] = math_util.quat_mul(pose[o:o + 4], math_util.quat_from_axis_angle([0, 0, 1], angle))
    scene.sim_char.set_state(pose, vel)
    scene._touch()


def test_pose_termination_on_a_far_body():
    """A right hip swung by 1.5 rad moves the right ankle (0.8 m below it) by about 1.1 m: a fall
    at a decision with --pose_termination_dist 0.5, not with 2, not without the option."""
    for dist, fallen in (("0.5", True), ("2", False), (None, False)):
        env = make_env(*(("--pose_termination_dist", dist) if dist else ()))
        try:
            scene = env
            bend_hip(scene, 1.5)
            assert scene.ctrl.need_new_action
            assert scene.body_pos_errors().max() > 0.9
            assert scene.has_fallen() == fallen, dist
        finally:
            env.shutdown()


def test_negative_pose_termination_dist_is_an_error():
    with pytest.raises(ValueError, match="--pose_termination_dist -1.0: must be >= 0"):
        make_env("--pose_termination_dist", "-1")


def test_reference_frames_ahead_in_the_state():
    """--tar_obs_steps 1 3: the state gains, per step k, the reference's pose k decisions ahead as
    the simulated character sees it: root offset and root rotation in its heading frame, then the
    local joint rotations (normal, tangent) and revolute angles, computed here by hand."""
    from env.sim.ct_state import heading_frame, normal_tangent

    env = make_env("--tar_obs_steps", "1", "3")
    try:
        scene = env
        base = 227
        per_step = 3 + 6 + 6 * 8 + 4
        assert env.get_state_size(0) == base + 2 * per_step
        assert env.build_state_norm_groups(0)[base:].tolist() == [0] * (2 * per_step)
        names = scene.state_layout.entry_names([b.name for b in scene.char_desc.bodies])
        assert len(names) == env.get_state_size(0)
        assert names[base:base + 3] == ["ref1/root_pos_x", "ref1/root_pos_y", "ref1/root_pos_z"]
        assert names[base + per_step + 9] == "ref3/chest/normal_x" and names[-1] == "ref3/left_elbow/angle"
        state = env.record_state(0)
        pose = scene.sim_char.get_state()[0]
        heading, to_heading = heading_frame(pose[3:7])
        for i, k in enumerate((1, 3)):
            ref = scene.kin_char.calc_pose(scene.kin_char.time + k / 30)
            feats = state[base + i * per_step:base + (i + 1) * per_step]
            np.testing.assert_allclose(feats[0:3], to_heading @ (ref[0:3] - pose[0:3]), atol=1e-12)
            root_local = math_util.quat_mul(math_util.quat_from_axis_angle([0, 1, 0], -heading), ref[3:7])
            np.testing.assert_allclose(feats[3:9], normal_tangent(root_local[None])[0], atol=1e-12)
            sph = ref[scene.reward_fn.sph_cols]
            np.testing.assert_allclose(feats[9:57], normal_tangent(sph).ravel(), atol=1e-12)
            np.testing.assert_allclose(feats[57:], ref[scene.reward_fn.rev_cols], atol=1e-12)
    finally:
        env.shutdown()


def test_reference_frames_steps_must_be_positive():
    with pytest.raises(ValueError, match="--tar_obs_steps 0 2: steps must be >= 1"):
        make_env("--tar_obs_steps", "0", "2")
