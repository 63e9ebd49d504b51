"""tests/bench/body_error_floor.py: its size measures against hand values and pybullet's forward
kinematics, its episode recording against the reference played kinematically (error 0), a short
PD-floor episode, and the recommendation's arithmetic."""
import numpy as np
import pytest

from app.evaluate import run_episodes
from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from env.sim.sim_character import SimCharacter
from env.sim.world import World
from tests.bench.body_error_floor import (SeriesRecorder, clip_samples, early_mean, floor_world, pd_floor,
                                          pose_scales, recommend)

# humanoid3d's joint positions in its default pose (every rotation the identity, root at the
# origin), summed by hand from the character file's AttachX/Y/Z: root, chest, neck, right hip,
# knee, ankle, shoulder, elbow, wrist, left hip, knee, ankle, shoulder, elbow, wrist
HUMANOID_DEFAULT_JOINTS = np.array([
    [0, 0, 0], [0, 0.236151, 0], [0, 0.460045, 0],
    [0, 0, 0.084887], [0, -0.421546, 0.084887], [0, -0.831416, 0.084887],
    [-0.02405, 0.479651, 0.18311], [-0.02405, 0.204863, 0.18311], [-0.02405, -0.054084, 0.18311],
    [0, 0, -0.084887], [0, -0.421546, -0.084887], [0, -0.831416, -0.084887],
    [-0.02405, 0.479651, -0.18311], [-0.02405, 0.204863, -0.18311], [-0.02405, -0.054084, -0.18311]])
HEAD_TOP = 0.460045 + 0.175 + 0.205 / 2        # neck joint + its sphere's centre + radius
SOLE = -0.831416 - 0.0225 - 0.055 / 2           # ankle joint + its box's centre - half height


@pytest.fixture(scope="module")
def humanoid():
    return CharacterDesc.load("data/characters/humanoid3d.txt")


def test_humanoid_default_pose_scales_are_the_hand_values(humanoid):
    pose = KinCharacter(humanoid).default_pose()
    scales = pose_scales(humanoid, pose[None])
    assert scales["height_m"] == pytest.approx(HEAD_TOP - SOLE, abs=1e-9)     # 1.619 m
    assert scales["root_height_m"] == pytest.approx(-SOLE, abs=1e-9)          # 0.881 m
    assert scales["body_root_dist_m"] == pytest.approx(np.linalg.norm(HUMANOID_DEFAULT_JOINTS, axis=1).mean(),
                                                       abs=1e-9)


def test_body_root_distance_is_on_pybullets_link_origins(humanoid):
    """The walk clip's samples: the mean distance from the root of pybullet's link frame origins
    (the points body_pos_err compares), one pose at a time, is the measure's."""
    poses = clip_samples(Motion.load("data/motions/humanoid3d_walk.txt", humanoid))[::8]
    world = World(world_scale=4.0)
    try:
        char = SimCharacter(world, humanoid)
        dists = []
        for pose in poses:
            char.set_state(pose, np.zeros(humanoid.dof_size))
            joints = char.get_body_states().joint_pos
            dists.append(np.linalg.norm(joints - joints[0], axis=1).mean())
    finally:
        world.shutdown()
    assert pose_scales(humanoid, poses)["body_root_dist_m"] == pytest.approx(np.mean(dists), abs=1e-6)


def test_clip_samples_cover_one_period_at_the_decision_rate(humanoid):
    motion = Motion.load("data/motions/humanoid3d_walk.txt", humanoid)     # 1.2666 s: 37.998 decisions
    samples = clip_samples(motion)
    assert len(samples) == 38
    np.testing.assert_allclose(samples[30], motion.calc_frame(1.0))


class KinematicRecorder(SeriesRecorder):
    """The simulated character put on the reference's state after every update, before the
    metrics read it: the reference played kinematically against itself."""

    def after_update(self):
        env = self.env
        env._pose_kin()
        env.sim_char.set_state(env.kin_char.pose, env.kin_char.vel)
        env._touch()
        return super().after_update()


def test_reference_played_kinematically_against_itself_is_zero(tmp_path):
    world = floor_world("dog3d", "trot", 1000, str(tmp_path))
    try:
        recorder = KinematicRecorder(world, 0.5)
        stats = run_episodes(world, 1, recorder)
    finally:
        world.shutdown()
    assert not stats[0].fell and stats[0].length_s == pytest.approx(0.5)
    assert len(recorder.series[0]) == 15
    assert max(recorder.series[0]) < 1e-9 and stats[0].tracking["body_pos_err"] < 1e-9


def test_a_short_pd_floor_episode_starts_near_the_reference(tmp_path):
    floor = pd_floor("dog3d", "trot", 1, 0.1, 0.2, 1000, str(tmp_path))
    episode = floor["episodes"][0]
    assert not episode["fell"] and episode["length_s"] == pytest.approx(0.1)
    assert floor["falls"] == 0 and floor["mean_time_to_fall_s"] is None
    assert 0.0 < episode["body_pos_err"] < 0.05
    assert episode["body_pos_err_early"] == pytest.approx(episode["body_pos_err"])    # window > episode


def test_early_mean_takes_the_first_decisions():
    series = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert early_mean(series, 1 / 30, 0.1) == pytest.approx(2.0)
    assert early_mean(series, 1 / 30, 1.0) == pytest.approx(3.0)
    assert early_mean(series, 1 / 30, 0.0) == pytest.approx(1.0)


# dog floor / humanoid floor over the scale ratio 0.5: 1, 0.9, 0.7, 1.3 (tolerance 0.25)
@pytest.mark.parametrize("dog_floor, verdict", [(0.025, "matches"), (0.0225, "matches"), (0.0175, "below"),
                                                (0.0325, "above")])
def test_recommendation_scales_the_bound_by_the_body_root_distance(dog_floor, verdict):
    means = {"humanoid3d": {"height_m": 1.6, "root_height_m": 0.8, "body_root_dist_m": 0.4,
                            "pd_floor_body_pos_err": 0.2, "pd_floor_body_pos_err_early": 0.05},
             "dog3d": {"height_m": 1.2, "root_height_m": 0.6, "body_root_dist_m": 0.2,
                       "pd_floor_body_pos_err": 0.1, "pd_floor_body_pos_err_early": dog_floor}}
    ratios, rec = recommend(means)
    assert ratios["height_m"] == pytest.approx(0.75) and ratios["root_height_m"] == pytest.approx(0.75)
    assert rec["scale_ratio"] == pytest.approx(0.5) and rec["bound_m"] == pytest.approx(0.04)
    assert rec["pd_floor_over_scale_ratio"] == pytest.approx(dog_floor / 0.05 / 0.5)
    assert rec["pd_floor_verdict"].startswith(verdict)
