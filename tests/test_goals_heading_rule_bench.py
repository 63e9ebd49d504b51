"""tests/bench/goals_heading_rule.py: the rule reads the heading scene's own goal (record_goal) and
turns towards the target, then runs or walks by the target speed."""
import numpy as np
import pytest

from env.scenes.heading_amp import HeadingAMPScene
from tests.bench.goals_heading_rule import rule_goal

WALK, RUN, LEFT, RIGHT = 5, 6, 7, 8


class Scene:
    """What record_goal reads: the root turned by `root_deg` about the vertical (pose [x, y, z, qw,
    qx, qy, qz]), the target heading and speed."""

    def __init__(self, root_deg, tar_deg, tar_speed):
        half = np.radians(root_deg) / 2
        self.pose = np.array([0.0, 0.9, 0.0, np.cos(half), 0.0, np.sin(half), 0.0])
        self.tar_heading, self.tar_speed = np.radians(tar_deg), tar_speed

    def sim_pose_vel(self):
        return self.pose, np.zeros_like(self.pose)


@pytest.mark.parametrize("root_deg, tar_deg, speed, expected", [
    (0, 90, 2.0, LEFT), (0, -90, 2.0, RIGHT), (150, -150, 3.0, LEFT), (-150, 150, 3.0, RIGHT), (170, -170, 3.0, RUN),
    (40, 65, 4.0, RUN), (40, 65, 1.5, WALK), (0, 35, 1.0, LEFT), (0, -35, 4.5, RIGHT), (90, 90, 2.5, RUN)])
def test_rule_on_the_scenes_goal(root_deg, tar_deg, speed, expected):
    goal = HeadingAMPScene.record_goal(Scene(root_deg, tar_deg, speed))
    assert rule_goal(goal, 30.0, 2.4, (WALK, RUN, LEFT, RIGHT)) == expected
