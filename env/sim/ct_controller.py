"""DeepMimic's ct_pd controller (cCtPDController) on a SimCharacter.

Timing: the controller keeps its own time (set to the reference time at reset). A new action is
needed when the time since reset crosses a multiple of 1 / QueryRate (cMathUtil::CheckNextInterval
with its 0.001 dt padding), so at 30 Hz with 1/600 s updates every 20th update asks. Between
decisions the PD targets are held and the PD command is re-sent every update.
Phase: (time / cycle period) mod 1, the cycle period being the clip's duration.
"""
import math

import numpy as np

from env.sim.ct_action import build_action_layout
from env.sim.ct_state import StateLayout
from env.sim.pd_controller import build_pd_controller


def check_next_interval(delta, value, interval):
    """True when `value` crossed a multiple of `interval` during the last `delta`."""
    pad = 0.001 * delta
    return math.floor((value + pad) / interval) != math.floor((value + pad - delta) / interval)


class CtPDController:
    def __init__(self, sim_char, params, cycle_period=1.0):
        self.sim_char = sim_char
        self.params = params
        self.cycle_period = cycle_period
        self.update_period = 1.0 / params.query_rate
        desc = sim_char.desc
        self.state_layout = StateLayout(params, sim_char.num_bodies)
        self.action_layout = build_action_layout(params, desc)
        self.pd = build_pd_controller(params.pd_mode, sim_char, params.kp, params.kd,
                                      [j.torque_lim for j in desc.joints])
        self.time = 0.0
        self.init_time_offset = 0.0
        self.need_new_action = True
        self.action = np.zeros(self.action_layout.size)
        self.pd.set_targets(*self.action_layout.to_targets(self.action))

    def reset(self, init_time):
        """DeepMimic's Reset + SetInitTime: controller time = the reference time."""
        self.time = init_time
        self.init_time_offset = -init_time
        self.need_new_action = True

    @property
    def phase(self):
        return (self.time / self.cycle_period) % 1.0

    def record_state(self, body_states, ground_height=0.0):
        return self.state_layout.build(body_states, self.phase, ground_height)

    def set_action(self, action):
        self.action = np.array(action, dtype=float)
        self.pd.set_targets(*self.action_layout.to_targets(self.action))

    def set_targets(self, sph_quats, rev_angles):
        """PD targets given directly (imitate's reference-relative actions compute them)."""
        self.action = self.action_layout.from_targets(sph_quats, rev_angles)
        self.pd.set_targets(sph_quats, rev_angles)

    def update(self, timestep):
        """Before the physics step: advance time, send the PD command for this update."""
        self.time += timestep
        self.need_new_action = False
        self.pd.apply(timestep)

    def post_update(self, timestep):
        self.need_new_action = check_next_interval(timestep, self.time + self.init_time_offset, self.update_period)
