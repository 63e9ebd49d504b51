"""Scenes by name (the --scene argument). Every scene takes (arg_parser, rng); DeepMimicEnv
(env/deepmimic_env.py) builds the one the args name.

Entries are classes or "module:Class" paths imported when that scene is built, so a scene's module
(and what it imports) loads only when it is used.
"""
import importlib

SCENES = {
    "kin_char": "env.scenes.kin_char:KinCharScene",
    "imitate": "env.scenes.imitate:ImitateScene",
    "imitate_amp": "env.scenes.imitate_amp:ImitateAMPScene",
    "target_amp": "env.scenes.target_amp:TargetAMPScene",
    "heading_amp": "env.scenes.heading_amp:HeadingAMPScene",
    "dribble_amp": "env.scenes.dribble_amp:DribbleAMPScene",
    "strike_amp": "env.scenes.strike_amp:StrikeAMPScene",
    "heading_amp_getup": "env.scenes.heading_amp_getup:HeadingAMPGetupScene",
    "goals_point": "env.scenes.goals_point:GoalsPointScene",
}


def scene_class(name):
    if name not in SCENES:
        raise ValueError(f"--scene {name!r} is not one of {', '.join(sorted(SCENES))}")
    entry = SCENES[name]
    if isinstance(entry, str):
        module, cls = entry.split(":")
        entry = getattr(importlib.import_module(module), cls)
    return entry
