"""A gymnasium.Env over a DeepMimic argument file (one agent): the scene as RL libraries expect it.

    import gymnasium, app.gym_env
    env = gymnasium.make("DeepMimic/Walk-v0")          # args/train_humanoid3d_walk_args.txt
    env = app.gym_env.DeepMimicGymEnv("args/train_humanoid3d_backflip_args.txt", render_mode="rgb_array")

One step is one policy decision (1/30 s at DeepMimic's rates): the action is set, the env is
updated (app/rollout.py's loop, the caller acting in the agent's place) until it asks for the next
one or the episode ends, and the reward of that decision is returned; the caller resets.
- observation: the state (and the goal, for scenes with one) as float32, unnormalised.
- action: a Box between the controller's action bounds.
- terminated: the episode ended in a fall or a failure (Terminate.Fail) or a success (Succ);
  truncated: it ended otherwise (the time limit), or its velocities exploded
  (info["invalid_episode"], DeepMimic discards such episodes).
- info: the reward's named terms (imitate: pose, vel, end_eff, root, com) and the episode time.
- seed: reset(seed=...) reseeds the scene's random generator (reset states, perturbations), so a
  seeded rollout repeats exactly.
- render_mode "rgb_array": an 800x450 image from the viewer's headless renderer (OpenGL runs in a
  child process, env/render/render_process.py).
The arg file is used as for training (its time limits: the train_ files' curriculum starts with
short episodes); --key value overrides follow it as `extra_args`.
"""
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium import spaces

from app.rollout import UNBOUNDED, Hooks, WorldEvent, run_updates
from env.deepmimic_env import DeepMimicEnv
from env.env import FRAME_TIME, Mode, Terminate
from util.arg_parser import load_args

ARGS_DIR = Path(__file__).resolve().parents[1] / "args"
RENDER_SIZE = (800, 450)
CLIPS = ("backflip", "cartwheel", "crawl", "dance_a", "dance_b", "getup_facedown", "getup_faceup", "jump", "kick",
         "punch", "roll", "run", "spin", "spinkick", "walk")


def gym_id(clip):
    """DeepMimic/<Clip>-v0, the clip's name in CamelCase (dance_a -> DanceA)."""
    return "DeepMimic/" + "".join(part.capitalize() for part in clip.split("_")) + "-v0"


class DeepMimicGymEnv(gymnasium.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, arg_file, extra_args=(), render_mode=None, mode="train"):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode {render_mode!r} is not one of None, 'rgb_array'")
        self.env = DeepMimicEnv(load_args(["--arg_file", str(arg_file), *map(str, extra_args)]))
        if self.env.get_num_agents() != 1:
            raise ValueError(f"{arg_file}: a gymnasium env needs a scene with one agent, "
                             f"this one has {self.env.get_num_agents()}")
        self.env.set_mode(Mode.TRAIN if mode == "train" else Mode.TEST)
        self.render_mode = render_mode
        self.timestep = FRAME_TIME / self.env.get_num_update_substeps()
        obs_size = self.env.get_state_size(0) + self.env.get_goal_size(0)
        self.observation_space = spaces.Box(-np.inf, np.inf, (obs_size,), np.float32)
        self.action_space = spaces.Box(self.env.build_action_bound_min(0).astype(np.float32),
                                       self.env.build_action_bound_max(0).astype(np.float32), dtype=np.float32)
        self._hooks = CallerActs(self.env)
        self._renderer = None
        self._camera = None

    def _obs(self):
        return np.concatenate([self.env.record_state(0), self.env.record_goal(0)]).astype(np.float32)

    def _info(self):
        return {"reward_terms": self.env.get_reward_terms(0), "time": self.env.get_time()}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            # the scene holds this generator: reseeding it in place reseeds the scene
            self.env.rng.bit_generator.state = np.random.default_rng(seed).bit_generator.state
        self.env.reset()
        self._hooks.action = None
        run_updates(self.env, self.timestep, UNBOUNDED, self._hooks)
        return self._obs(), self._info()

    def step(self, action):
        self._hooks.action = np.asarray(action, dtype=np.float64)
        invalid = run_updates(self.env, self.timestep, UNBOUNDED, self._hooks) == WorldEvent.INVALID_EPISODE
        reward = float(self.env.calc_reward(0))
        ended = self.env.is_episode_end()
        terminate = self.env.check_terminate(0) if ended else Terminate.Null
        terminated = ended and terminate in (Terminate.Fail, Terminate.Succ)
        truncated = invalid or (ended and not terminated)
        info = self._info()
        if invalid:
            info["invalid_episode"] = True
        return self._obs(), reward, terminated, truncated, info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        from env.render.camera import Camera
        from env.render.draw_list import build_frame
        from env.render.render_process import RenderProcess

        scene = self.env        # the env is the scene (env/deepmimic_env.py)
        if self._renderer is None:
            self._renderer = RenderProcess(*RENDER_SIZE, headless=True)
            self._camera = Camera.side_view(scene.camera_focus(), *RENDER_SIZE)
        self._camera.track(scene.camera_focus())
        return self._renderer.draw(build_frame(scene.draw_characters(), scene.draw_projectiles()), self._camera, [])

    def close(self):
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.env.shutdown()


class CallerActs(Hooks):
    """The rollout's hooks of a gymnasium step: the caller's action (`action`) is set at the
    decision the step starts from, the loop stops at the next one, and an ended or invalid episode
    is left to the caller (no reset)."""

    def __init__(self, env):
        self.env = env
        self.action = None

    def act(self, timestep):
        if not self.env.need_new_action(0):
            return False
        if self.action is None:
            return True
        self.env.set_action(0, self.action)
        self.action = None
        return False


def register_envs():
    """DeepMimic/<Clip>-v0 for the 15 imitate skills (the train_ args files)."""
    for clip in CLIPS:
        if gym_id(clip) not in gymnasium.registry:
            gymnasium.register(id=gym_id(clip), entry_point="app.gym_env:DeepMimicGymEnv",
                               kwargs={"arg_file": str(ARGS_DIR / f"train_humanoid3d_{clip}_args.txt")})


register_envs()
