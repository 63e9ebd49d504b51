"""Scene `kin_char` (DeepMimic's cSceneKinChar): plays a clip on a kinematic character, no physics.

Args: character_file (character_files accepted too), motion_file, char_init_pos_x. A looping
('wrap') clip advances forever (each cycle moves on by the clip's root displacement); a 'none'
clip restarts from its beginning when it ends.
"""
import numpy as np

from env.anim.character import CharacterDesc
from env.anim.kin_character import KinCharacter
from env.anim.motion import Motion
from env.scenes.scene import Scene


class KinCharScene(Scene):
    name = "kin_char"

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        char_file = arg_parser.parse_string("character_file") or arg_parser.parse_strings("character_files", [""])[0]
        if not char_file:
            raise ValueError("scene kin_char: missing --character_file")
        self.char_desc = CharacterDesc.load(char_file)
        motion = Motion.load(arg_parser.parse_string("motion_file", required=True), self.char_desc)
        self.kin_char = KinCharacter(self.char_desc, motion)
        self.kin_char.origin_pos = np.array([arg_parser.parse_float("char_init_pos_x", 0.0, finite=True), 0.0, 0.0])
        self.kin_char.set_time(0.0)

    def reset(self):
        super().reset()
        self.kin_char.set_time(0.0)

    def update(self, timestep):
        if timestep <= 0.0:
            return
        super().update(timestep)
        time = self.kin_char.time + timestep
        motion = self.kin_char.motion
        if motion.loop == "none" and time > motion.duration:
            time -= motion.duration
        self.kin_char.set_time(time)

    def get_time(self):
        return self.kin_char.time

    def draw_characters(self):
        pos, rot = self.kin_char.calc_body_world(self.kin_char.pose)
        return [(self.char_desc, pos, rot, "kin")]

    def camera_focus(self):
        return self.kin_char.root_pos.copy()
