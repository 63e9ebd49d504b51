"""Actions relative to the reference pose (opt-in: imitate's --ref_relative_actions true).

The policy's action is an offset from the reference's joint rotations instead of the PD targets
themselves: for a spherical joint the target is q_ref * q(a) (a's rotation in the joint's frame
after the reference's, with q(a) as the controller's layout reads a), for a revolute joint
angle_ref + a. A zero action therefore tracks the reference, so an untrained policy (whose
outputs start near zero) already follows the clip with PD and learns corrections.

Normalisation: offset 0 (the zero action is the reference), the controller layout's scale, and
bounds centred on 0 with the layout's half-widths (spherical +-2 pi, revolute +-2 range).
"""
import numpy as np

from util import math_util


class RefRelativeActions:
    def __init__(self, layout):
        self.layout = layout
        self.size = layout.size
        self.offset = np.zeros(layout.size)
        self.scale = layout.scale.copy()
        half = 0.5 * (layout.bound_max - layout.bound_min)
        self.bound_min, self.bound_max = -half, half

    def to_targets(self, action, ref_sph, ref_rev):
        """PD targets (spherical quaternions, revolute angles) of an action about the reference's
        local joint rotations ref_sph (n, 4) and angles ref_rev."""
        sph, rev = self.layout.to_targets(action)
        return math_util.quat_mul(ref_sph, sph), ref_rev + rev

    def from_targets(self, sph_quats, rev_angles, ref_sph, ref_rev):
        """The action whose targets about the reference are these (inverse of to_targets)."""
        return self.layout.from_targets(math_util.quat_mul(math_util.quat_conj(ref_sph), sph_quats),
                                        np.asarray(rev_angles) - ref_rev)
