"""The AMP scenes through DeepMimicEnv: imitate_amp (observations, termination, rewards, DTW),
target_amp, heading_amp, and the AMP args files."""
import copy
import math
from pathlib import Path

import numpy as np
import pytest

from env.deepmimic_env import DeepMimicEnv
from env.env import Mode, Terminate
from env.scenes.heading_amp import HeadingAMPScene
from env.scenes.imitate_amp import ImitateAMPScene, MotionSet
from env.scenes.scene_builder import scene_class
from env.scenes.target_amp import TargetAMPScene
from learning.agent_builder import load_agent_config
from learning.agents.amp_agent import AMPAgent
from util import math_util
from util.arg_parser import load_args
from util.paths import resolve_data_path

AMP_SCENES = {cls.name: cls for cls in (ImitateAMPScene, TargetAMPScene, HeadingAMPScene)}
ARGS_DIR = Path(__file__).resolve().parent.parent / "args"
WALK_ARGS = str(ARGS_DIR / "train_amp_humanoid3d_walk_args.txt")
HEADING_ARGS = str(ARGS_DIR / "train_amp_heading_humanoid3d_locomotion_args.txt")
TARGET_ARGS = str(ARGS_DIR / "train_amp_target_humanoid3d_locomotion_args.txt")


def make_env(arg_file, *extra, seed=0):
    return DeepMimicEnv(load_args(["--arg_file", arg_file, *map(str, extra)]), seed=seed)


def step_decision(env, action=None):
    """Sets an action (zeros by default) and updates until the next decision or episode end."""
    env.set_action(0, np.zeros(env.get_action_size(0)) if action is None else action)
    env.update(env.update_timestep)
    while not (env.need_new_action(0) or env.is_episode_end()):
        env.update(env.update_timestep)


@pytest.fixture(scope="module")
def walk_env():
    env = make_env(WALK_ARGS, "--enable_amp_obs_local_root", "true")
    yield env
    env.shutdown()


def test_env_exposes_the_amp_calls(walk_env):
    env = walk_env
    assert all(scene_class(name) is cls for name, cls in AMP_SCENES.items())
    assert env.get_amp_obs_size() == 226
    assert np.array_equal(env.get_amp_obs_offset(), np.zeros(226))
    assert np.array_equal(env.get_amp_obs_scale(), np.ones(226))
    assert np.array_equal(env.get_amp_obs_norm_group(), np.zeros(226))
    assert env.enable_amp_task_reward() is False
    assert env.get_goal_size(0) == 0
    assert env.record_amp_obs_agent(0).shape == env.record_amp_obs_expert(0).shape == (226,)


def place(scene, pose, vel):
    scene.sim_char.set_state(pose, vel)
    scene._touch()


@pytest.mark.parametrize("num_steps", [2, 4])
def test_expert_obs_equals_agent_obs_on_the_clip(walk_env, num_steps):
    """The character placed on the clip at decisions t - (N - 1)/30, ..., t - 1/30 and then at t
    gives the expert's observation window of the clip at t, with world or local root."""
    scene = walk_env
    scene.set_amp_obs_steps(num_steps)
    assert walk_env.get_amp_obs_size() == num_steps * 113
    motion = scene.motion
    scene.kin_char.origin_pos = np.zeros(3)       # the reference origin on the ground
    for local_root in (False, True):
        scene.amp_obs.local_root = local_root
        for t in (0.013, 0.5, motion.duration - 0.01):
            for k in range(num_steps - 1, 0, -1):
                place(scene, motion.calc_frame(t - k / 30), motion.calc_vel(t - k / 30))
                scene.new_action_update()
            place(scene, motion.calc_frame(t), motion.calc_vel(t))
            agent = scene.record_amp_obs_agent(0)
            expert = scene.calc_expert_obs(motion, t)
            assert agent.shape == (num_steps * 113,)
            np.testing.assert_allclose(agent, expert, rtol=0, atol=1e-9)
    scene.set_amp_obs_steps(2)
    walk_env.reset()


def test_random_expert_obs_comes_from_the_clip(walk_env):
    """A recorded expert observation is the clip's at a time uniform in [0, duration]."""
    scene = walk_env
    rng_copy = copy.deepcopy(scene.rng)
    obs = scene.record_amp_obs_expert(0)
    t = rng_copy.uniform(0.0, scene.motion.duration)
    np.testing.assert_array_equal(obs, scene.calc_expert_obs(scene.motion, t))


def test_expert_obs_batch_draws_times_from_the_clip(walk_env):
    """A batch of expert observations: the clip's at times uniform in [0, duration], one draw per
    row in order, each row what calc_expert_obs gives at its time."""
    scene = walk_env
    rng_copy = copy.deepcopy(scene.rng)
    batch = scene.record_amp_obs_expert_batch(0, 7)
    times = rng_copy.uniform(0.0, scene.motion.duration, 7)
    assert batch.shape == (7, 226)
    for row, t in zip(batch, times):
        np.testing.assert_allclose(row, scene.calc_expert_obs(scene.motion, t), rtol=0, atol=1e-12)


def test_expert_obs_batch_samples_clips_by_weight(monkeypatch):
    """With a motion set, each row comes from a clip drawn by weight (0.7 run, 0.3 walk), its time
    within that clip, and lands in its own row."""
    env = make_env(HEADING_ARGS)
    scene = env
    calls = []

    def fake_batch(motion, times):
        calls.append((motion, np.asarray(times)))
        index = scene.motion_set.motions.index(motion)
        return np.column_stack([np.full(len(times), index), times, np.zeros((len(times), scene.amp_obs.size - 2))])

    monkeypatch.setattr(scene, "calc_expert_obs_batch", fake_batch)
    batch = scene.record_amp_obs_expert_batch(0, 4000)
    assert batch.shape == (4000, scene.amp_obs.size)
    assert abs(np.mean(batch[:, 0] == 0) - 0.7) < 0.03
    for motion, times in calls:
        index = scene.motion_set.motions.index(motion)
        assert np.all((times >= 0) & (times <= motion.duration))
        np.testing.assert_array_equal(np.sort(batch[batch[:, 0] == index, 1]), np.sort(times))
    assert sorted(scene.motion_set.motions.index(m) for m, _ in calls) == [0, 1]
    env.shutdown()


def test_agent_obs_history_is_the_previous_decisions(walk_env):
    """At reset the history is the reference one, two, ... decisions earlier; after each decision,
    the update saves the pose the decision was taken in, newest first, with its body centres
    (forward kinematics for the reference's, the physics' for the simulated character's)."""
    env = walk_env
    scene = env
    scene.set_amp_obs_steps(3)
    env.reset()
    t0 = scene.ctrl.time
    assert len(scene.amp_hist) == 2
    for k, (pose, _, bodies) in enumerate(scene.amp_hist, start=1):
        np.testing.assert_allclose(pose[7:], scene.motion.calc_frame(t0 - k / 30)[7:], atol=1e-12)
        np.testing.assert_allclose(bodies, scene.amp_obs.kin.calc_body_world(pose)[0], rtol=0, atol=1e-12)
    pose1 = scene.sim_pose_vel()[0].copy()
    bodies1 = scene.amp_obs.kin.calc_body_world(pose1)[0]
    step_decision(env)
    np.testing.assert_array_equal(scene.amp_hist[0][0], pose1)
    np.testing.assert_allclose(scene.amp_hist[0][2], bodies1, rtol=0, atol=1e-9)   # the physics' own
    pose2 = scene.sim_pose_vel()[0].copy()
    env.set_action(0, np.zeros(env.get_action_size(0)))
    env.update(scene.update_timestep)
    assert len(scene.amp_hist) == 2
    np.testing.assert_array_equal(scene.amp_hist[0][0], pose2)
    np.testing.assert_array_equal(scene.amp_hist[1][0], pose1)
    scene.set_amp_obs_steps(2)
    env.reset()


def test_training_reward_is_zero_and_only_falls_terminate(walk_env):
    env = walk_env
    env.set_mode(Mode.TRAIN)
    env.reset()
    for _ in range(3):
        step_decision(env)
        assert env.calc_reward(0) == 0.0
        assert env.get_reward_terms(0) == {}    # the style reward is the agent's: no scene terms
    scene = env
    # a non-looping clip's end or the imitation reward's terms play no part
    scene.motion_over = lambda: True
    assert env.check_terminate(0) == Terminate.Null
    del scene.motion_over
    scene._fallen_contact = True
    assert env.check_terminate(0) == Terminate.Fail
    env.reset()


def test_test_mode_reward_is_the_time_warp_cost():
    env = make_env(WALK_ARGS, "--time_end_lim_min", 0.5, "--time_end_lim_max", 0.5)
    env.set_mode(Mode.TEST)
    env.reset()
    scene = env
    assert scene.time_warper.capacity == math.ceil(30 * 0.5) + 2
    rewards = []
    while not env.is_episode_end():
        step_decision(env)
        rewards.append(env.calc_reward(0))
    assert all(r == 0 for r in rewards[:-1])
    n = scene.time_warper.sample_count
    assert n in (16, 17)    # the reset, then every decision (15 or 16 in 0.5 s, float rounding)
    assert rewards[-1] == pytest.approx(scene.time_warper.calc_alignment() + 17 - n)
    assert 0 < scene.time_warper.calc_alignment() < n * 0.5
    env.shutdown()


def test_motion_set_samples_by_weight(tmp_path):
    env = make_env(HEADING_ARGS)
    scene = env
    assert [m.path.name for m in scene.motion_set.motions] == ["humanoid3d_run.txt", "humanoid3d_walk.txt"]
    np.testing.assert_allclose(scene.motion_set.probs, [0.7, 0.3])
    rng = np.random.default_rng(1)
    picks = [scene.motion_set.sample(rng) is scene.motion_set.motions[0] for _ in range(4000)]
    assert abs(np.mean(picks) - 0.7) < 0.03
    played = set()
    for _ in range(12):
        env.reset()
        played.add(scene.motion.path.name)
        assert scene.kin_char.motion is scene.motion and scene.ctrl.cycle_period == scene.motion.duration
    assert played == {"humanoid3d_run.txt", "humanoid3d_walk.txt"}
    bad = tmp_path / "bad.txt"
    bad.write_text('{"Motions": [{"File": "data/motions/humanoid3d_walk.txt", "Weight": -1}]}')
    with pytest.raises(ValueError, match=r"bad.txt: Motions\[0\] key 'Weight'"):
        MotionSet.load(bad, scene.char_desc)
    env.shutdown()


def test_reset_motion_file_draws_the_resets_only(tmp_path, monkeypatch):
    """--reset_motion_file: every reset plays one of its clips (so relative actions follow it);
    the discriminator's expert data and the style error keep the motion_file's two clips."""
    walk_only = tmp_path / "walk_only.txt"
    walk_only.write_text('{"Motions": [{"Weight": 1, "File": "data/motions/humanoid3d_walk.txt"}]}')
    env = make_env(HEADING_ARGS, "--reset_motion_file", walk_only, "--ref_relative_actions", "true")
    scene = env
    names = ["humanoid3d_run.txt", "humanoid3d_walk.txt"]
    assert [m.path.name for m in scene.motion_set.motions] == names
    assert [m.path.name for m in scene.style_motions()] == names
    for _ in range(12):
        env.reset()
        assert scene.motion.path.name == "humanoid3d_walk.txt" and scene.kin_char.motion is scene.motion
        sph, rev = scene._relative_base()
        ref = scene.motion.calc_frame(scene.kin_char.time + scene.ctrl.update_period)
        np.testing.assert_array_equal(sph, ref[scene.reward_fn.sph_cols])
    calls = []
    monkeypatch.setattr(scene, "calc_expert_obs_batch",
                        lambda motion, times: calls.append(motion.path.name) or np.zeros((len(times), scene.amp_obs.size)))
    scene.record_amp_obs_expert_batch(0, 400)
    assert sorted(calls) == names
    env.shutdown()
    with pytest.raises(ValueError, match=r"--reset_motion_file .*walk_only.txt: needs --kin_ctrl clips"):
        make_env(WALK_ARGS, "--reset_motion_file", walk_only)


def test_new_cycles_follow_the_clip_playing(tmp_path, monkeypatch):
    """In a dataset of a looping clip (the run) and one that does not loop (the kick), the reference
    starts a new cycle at the run's period and never at the kick's end (DeepMimic's
    CheckKinNewCycle asks the current clip)."""
    mixed = tmp_path / "run_kick.txt"
    mixed.write_text('{"Motions": [{"Weight": 1, "File": "data/motions/humanoid3d_run.txt"},'
                     ' {"Weight": 1, "File": "data/motions/humanoid3d_kick.txt"}]}')
    env = make_env(HEADING_ARGS, "--motion_file", mixed)
    scene = env
    syncs = []
    monkeypatch.setattr(scene, "_sync_new_cycle", lambda: syncs.append(scene.motion.path.name))
    played = set()
    for _ in range(16):
        env.reset()
        played.add(scene.motion.path.name)
        syncs.clear()
        for _ in range(int(math.ceil(scene.motion.duration * 30)) + 30):     # past the clip's end
            scene._pre_physics(1 / 30)
        if scene.motion.loop == "none":
            assert syncs == []
        else:
            assert syncs and set(syncs) == {"humanoid3d_run.txt"}
    assert played == {"humanoid3d_run.txt", "humanoid3d_kick.txt"}
    env.shutdown()


def test_heading_goal_reward_and_target_changes():
    env = make_env(HEADING_ARGS, "--time_lim_min", 20, "--time_lim_max", 20, "--enable_char_contact_fall", "false",
                   seed=3)
    scene = env
    assert env.enable_amp_task_reward() is True
    assert env.get_goal_size(0) == 3 and env.build_goal_offset(0).shape == (3,)
    heading = float(math_util.quat_heading(scene.sim_pose_vel()[0][3:7]))
    assert scene.tar_heading == 0.0 and 1 <= scene.tar_speed <= 5
    np.testing.assert_allclose(env.record_goal(0), [np.cos(-heading), -np.sin(-heading), scene.tar_speed])

    # the reward from the centre of mass's motion over the control step
    step_decision(env)
    com, com_vel = scene._com_step_velocity()
    speed = float(scene.target_dir() @ (com_vel * [1, 0, 1]))
    expected = math.exp(-0.25 * (scene.tar_speed - speed) ** 2) if speed > 0 else 0.0
    assert env.calc_reward(0) == pytest.approx(expected)
    scene.prev_action_com = com - 2.0 / 30 * scene.target_dir()     # 2 m/s along the target heading
    scene.prev_action_time = scene.ctrl.time - 1 / 30
    assert env.calc_reward(0) == pytest.approx(math.exp(-0.25 * (scene.tar_speed - 2.0) ** 2))
    scene.prev_action_com = com + 1.0 / 30 * scene.target_dir()     # moving away
    assert env.calc_reward(0) == 0.0

    headings = {scene.tar_heading}
    for _ in range(60):
        step_decision(env)
        headings.add(scene.tar_heading)
    assert len(headings) >= 5       # 2 s: the timer redraws every 0.2-0.5 s
    env.shutdown()


def test_task_scenes_keep_deepmimics_quirks():
    """cSceneTargetAMP skips cSceneImitateAMP's argument parsing (AMP observations stay global
    whatever --enable_amp_obs_local_root says) and its controller stamps the action's start one
    update late (the step's speed divides by 19/600 s, not 1/30 s)."""
    for arg_file in (HEADING_ARGS, TARGET_ARGS):
        env = make_env(arg_file, "--enable_amp_obs_local_root", "true", "--enable_test_time_warp", "true")
        scene = env
        assert scene.amp_obs.local_root is False and scene.time_warper is None
        step_decision(env)
        assert scene.ctrl.time - scene.prev_action_time == pytest.approx(1 / 30 - 1 / 600)
        com, com_vel = scene._com_step_velocity()
        np.testing.assert_allclose(com_vel, (com - scene.prev_action_com) * 600 / 19, rtol=1e-9)
        env.shutdown()
    walk = make_env(WALK_ARGS, "--enable_amp_obs_local_root", "true")
    assert walk.amp_obs.local_root is True
    walk.shutdown()


def test_target_goal_reward_and_failure():
    env = make_env(TARGET_ARGS, seed=4)
    scene = env
    root = scene.sim_char.get_root_pos()
    assert math.hypot(*(scene.target_pos - root)[[0, 2]]) <= 10
    scene.target_pos = root + [3.0, 0.0, 4.0]
    scene.target_pos[1] = 0.0
    heading = float(math_util.quat_heading(scene.sim_pose_vel()[0][3:7]))
    c, s = math.cos(heading), math.sin(heading)
    # world (0.6, 0, 0.8) in the heading frame: rotate by -heading about y
    np.testing.assert_allclose(env.record_goal(0), [c * 0.6 - s * 0.8, s * 0.6 + c * 0.8, 5.0], atol=1e-9)

    step_decision(env)
    root = scene.sim_char.get_root_pos()
    com, _ = scene._com_step_velocity()
    scene.target_pos = com + [3.0, 0, 4.0]
    scene.target_pos[1] = 0.0
    scene.prev_action_com = com - [0.6 / 30, 0, 0.8 / 30]      # 1 m/s toward the target: v = v*
    scene.prev_action_time = scene.ctrl.time - 1 / 30
    dist_sq = (scene.target_pos[0] - root[0]) ** 2 + (scene.target_pos[2] - root[2]) ** 2
    assert env.calc_reward(0) == pytest.approx(0.6 * math.exp(-0.5 * dist_sq) + 0.4)
    scene.prev_action_com = com - [0.3 / 30, 0, 0.4 / 30]      # 0.5 m/s: min tar vel makes no difference below v*
    assert env.calc_reward(0) == pytest.approx(0.6 * math.exp(-0.5 * dist_sq) + 0.4 * math.exp(-4 * 0.25))
    scene.target_pos = root + [16.0, 0, 0]
    assert env.check_terminate(0) == Terminate.Fail and env.calc_reward(0) == 0.0
    env.shutdown()


def test_goal_markers_are_drawn():
    env = make_env(TARGET_ARGS)
    boxes = env.draw_projectiles()
    assert len(boxes) == 1 and np.allclose(boxes[0][1][[0, 2]], env.target_pos[[0, 2]])
    env.shutdown()
    env = make_env(HEADING_ARGS)
    scene = env
    boxes = scene.draw_projectiles()
    root = scene.sim_char.get_root_pos()
    assert len(boxes) == 4
    np.testing.assert_allclose(boxes[-1][1] - root, 4 * 0.25 * scene.tar_speed * scene.target_dir())
    env.shutdown()


@pytest.mark.parametrize("path", sorted(p for p in ARGS_DIR.glob("*_amp_*args.txt") if "_dribble_" not in p.name),
                         ids=lambda p: p.name)   # dribble_amp's: tests/test_dribble_scene.py
def test_amp_args_files(path):
    """Every AMP args file names an AMP scene, an existing clip or dataset and a valid AMP agent
    (tests/test_all_args_files.py loads the clips and runs each file)."""
    args = load_args(["--arg_file", str(path)])
    assert issubclass(scene_class(args.parse_string("scene")), ImitateAMPScene)
    resolve_data_path(args.parse_string("motion_file"))
    cls, _, _ = load_agent_config(args.parse_strings("agent_files")[0])
    assert issubclass(cls, AMPAgent)          # AMP, or the goal hierarchy with its discriminator
    assert args.parse_float("time_end_lim_max") == 20
    if path.name.startswith("run_"):
        assert args.parse_bools("train_agents") == [False]


def policy_input_names(env):
    """The names of the policy's state entries (env/sim/ct_state.py; imitate's ref<k>/... with
    --tar_obs_steps) and goal entries."""
    scene = env
    return scene.state_layout.entry_names([b.name for b in scene.char_desc.bodies]) + scene.goal_names(0)


def has_reference_in_the_policy(env):
    """(phase or reference-pose entries in the policy's input, actions relative to the reference)."""
    names = policy_input_names(env)
    desc = env.get_layout_desc(0)
    in_input = (desc["enable_phase_input"] or "phase" in names or bool(desc["tar_obs_steps"])
                or any(name.startswith("ref") for name in names))
    relative = desc["action_relative_to_reference"] or env.action_layout is not env.ctrl.action_layout
    return in_input, relative


@pytest.mark.parametrize("arg_file", [WALK_ARGS, HEADING_ARGS,
                                      str(ARGS_DIR / "train_amp_humanoid3d_walk_fast_args.txt"),
                                      str(ARGS_DIR / "run_humanoid3d_amp_walk_trained_args.txt"),
                                      str(ARGS_DIR / "run_humanoid3d_amp_heading_trained_args.txt")],
                         ids=lambda p: Path(p).name)
def test_paper_form_amp_args_put_no_reference_in_the_policy(arg_file):
    """DeepMimic's own AMP walk and heading files, the fast walk file without the reference-conditioned
    recipe's --train_args, and the shipped AMP walk's and heading policy's run_ files: the policy sees
    its own state (and the goal) only, no phase, no reference pose, and its action is an absolute PD
    target."""
    env = make_env(arg_file)
    assert len(policy_input_names(env)) == env.get_state_size(0) + env.get_goal_size(0)
    assert has_reference_in_the_policy(env) == (False, False)
    env.shutdown()


@pytest.mark.parametrize("argv", [["args/run_humanoid3d_amp_walk_ref_conditioned_trained_args.txt"],
                                  ["args/train_amp_humanoid3d_walk_fast_args.txt", "--ref_relative_actions",
                                   "true", "--tar_obs_steps", "1", "2", "3"]],
                         ids=["shipped_ref_conditioned_amp_walk", "fast_walk_with_the_recipe_train_args"])
def test_the_reference_conditioned_amp_walk_has_the_reference(argv):
    """The shipped reference-conditioned AMP walk (its run_ file; trained from the fast file with --train_args
    --ref_relative_actions true --tar_obs_steps 1 2 3): reference poses in its state, actions
    relative to the reference (the check above can fail)."""
    env = make_env(*argv)
    names = policy_input_names(env)
    assert has_reference_in_the_policy(env) == (True, True)
    assert sum(name.startswith("ref") for name in names) == 3 * (3 + 6 + 6 * 8 + 4)
    env.shutdown()


def test_the_reference_conditioned_heading_acts_relative_to_the_reference():
    """The shipped reference-conditioned heading policy (its run_ file): no reference pose in its
    input, but its actions are offsets from the reset clip's pose (the paper-form check above fails
    on it)."""
    env = make_env(str(ARGS_DIR / "run_humanoid3d_amp_heading_ref_conditioned_trained_args.txt"))
    assert has_reference_in_the_policy(env) == (False, True)
    env.shutdown()


def test_action_offset_from_motion_holds_the_clips_mean_pose():
    """--action_offset_from_motion: the zero normalised action's PD targets are the walk clip's mean
    joint rotations (revolute: the mean angle; spherical: the rotation of the mean exponential map
    over the frames), computed here from the clip file's columns; off, DeepMimic's offset (minus
    the joint-limit middle, 0 for the exponential maps); with relative actions it is an error."""
    env = make_env(WALK_ARGS, "--action_offset_from_motion", "true")
    plain = make_env(WALK_ARGS)
    desc, frames = env.char_desc, env.motion.frames
    layout = env.ctrl.action_layout
    sph_quats, rev_angles = layout.to_targets(-env.build_action_offset(0))
    sph = [j for j in desc.joints if j.type.name == "SPHERICAL"]
    rev = [j for j in desc.joints if j.type.name == "REVOLUTE"]
    for joint, quat in zip(sph, sph_quats):
        cols = desc.param_offset[joint.id] + np.arange(4)
        mean_exp = math_util.quat_to_exp_map(frames[:, cols]).mean(axis=0)
        np.testing.assert_allclose(math_util.quat_to_exp_map(quat), mean_exp, atol=1e-9, err_msg=joint.name)
    for joint, angle in zip(rev, rev_angles):
        assert angle == pytest.approx(frames[:, desc.param_offset[joint.id]].mean(), abs=1e-12), joint.name
    assert np.ptp(rev_angles) > 0.1 and np.abs(sph_quats[:, 1:]).max() > 0.05     # not the rest pose
    np.testing.assert_allclose(plain.build_action_offset(0)[layout.rev_cols],
                               [-0.5 * (j.limit_low + j.limit_high) for j in rev])
    assert not np.any(plain.build_action_offset(0)[layout.sph_cols])
    env.shutdown()
    plain.shutdown()
    with pytest.raises(ValueError, match="--action_offset_from_motion: needs absolute actions"):
        make_env(WALK_ARGS, "--action_offset_from_motion", "true", "--ref_relative_actions", "true")
