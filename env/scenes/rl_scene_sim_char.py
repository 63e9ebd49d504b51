"""A simulated character as an RL agent: DeepMimic's cSceneSimChar + cRLSceneSimChar.

Builds the physics world (world_scale, gravity, num_sim_substeps, terrain_file), one simulated
character (character_files[0]; enable_char_self_collision, default true as in DeepMimic, false
for the pybullet wheel's pretrained policies: see env/sim/sim_character.py) with its ct_pd
controller (char_ctrl_files[0]) as agent 0.

One update(dt) (DeepMimic's order): episode timer; random pushes; subclass hook (the reference
advances); controller time + PD command; one physics step call (num_sim_substeps sub-steps);
decision check; fall contacts. Nothing else runs per update: states, rewards and body states are
computed only when asked for (normally once per decision) and cached until the next update.

Termination: a fall (a fall-contact body touching the ground, checked after every update, or a
subclass's own condition) is Fail when enable_fall_end; the episode also ends (Null) when the timer
expires. Exploding velocities (any body component above 100 in character units) make the episode
invalid. That check reads every body's velocity, so it runs only where a sample can be recorded:
at decisions and when the episode is about to end; elsewhere check_valid_episode() is True (an
explosion between two decisions is caught at the next one, before anything is recorded).

Episode length curriculum: the timer's limits blend from time_lim_* to time_end_lim_* with
lerp = clamp(samples / anneal_samples, 0, 1)^4 (set_sample_count); test mode always uses
time_end_lim_max. Each reset draws the training limit (whatever the mode); a mode change applies
its mode's limit to the running episode too, so the episode under way when an RLWorld switches to
test mode (the env resets in its constructor, in training mode) already runs to the test limit.
"""
import numpy as np

from env.anim.character import CharacterDesc
from env.env import Mode, Terminate
from env.scenes.rl_scene import RLScene
from env.scenes.scene import parse_timer_params
from env.sim.ct_controller import CtPDController
from env.sim.ctrl_params import CtrlParams
from env.sim.perturbs import PerturbParams, Projectiles, RandPerturber
from env.sim.sim_character import SimCharacter
from env.sim.world import World

VEL_EXPLODE_THRESHOLD = 100.0
GROUND_PAD = 0.001
CHAR_CTRLS = ("ct_pd",)


class RLSceneSimChar(RLScene):
    name = "rl_sim_char"

    def __init__(self, arg_parser, rng):
        super().__init__(arg_parser, rng)
        args = arg_parser
        self.timer_params_end = parse_timer_params(args, "time_end_lim", self.timer_params)
        self.anneal_samples = args.parse_int("anneal_samples", -1)
        self.mode = Mode.TRAIN
        self.sample_count = 0
        self.enable_fall_end = args.parse_bool("enable_fall_end", True)
        self.enable_contact_fall = args.parse_bool("enable_char_contact_fall", True)

        # None: the process's margin (Bullet's 0.05 unless set), which a pybullet without the symbols
        # leaves at its 0; a given --broadphase_margin must be written
        margin = args.parse_float("broadphase_margin", None, at_least=0.0, finite=True)
        self.world = World(world_scale=args.parse_float("world_scale", 1.0, above=0.0, finite=True),
                           gravity=args.parse_floats("gravity", (0.0, -9.8, 0.0), count=3, finite=True),
                           num_sim_substeps=args.parse_int("num_sim_substeps", 1), timestep=self.update_timestep,
                           terrain_file=args.parse_string("terrain_file", ""), broadphase_margin=margin)
        char_types = args.parse_strings("char_types", ["general"])
        if set(char_types) != {"general"}:
            raise ValueError(f"--char_types {' '.join(char_types)}: the only character type is general")
        self.char_desc = CharacterDesc.load(args.parse_strings("character_files", required=True)[0])
        self.sim_char = SimCharacter(self.world, self.char_desc,
                                     self_collision=args.parse_bool("enable_char_self_collision", True))
        self.sim_char.set_fall_contact_bodies(args.parse_ints("fall_contact_bodies", ()))
        ctrl_types = args.parse_strings("char_ctrls", ["ct_pd"])
        if ctrl_types[0] not in CHAR_CTRLS:
            raise ValueError(f"--char_ctrls {ctrl_types[0]!r} is not supported (only {', '.join(CHAR_CTRLS)})")
        ctrl_params = CtrlParams.load(args.parse_strings("char_ctrl_files", required=True)[0], self.char_desc)
        self.ctrl = CtPDController(self.sim_char, ctrl_params)
        self.state_layout = self.ctrl.state_layout     # the policy state; task scenes may extend it
        self.action_layout = self.ctrl.action_layout   # the policy action; imitate may make it relative

        self.perturber = RandPerturber(PerturbParams.from_args(args), rng)
        self.sim_char.check_body_ids("perturb_part_ids", self.perturber.params.part_ids)
        self.projectiles = Projectiles(self.world)
        self._train_time_limit = self.timer.max_time
        self._ui_forces = []
        self._fallen_contact = False
        self._cache = {}  # values computed from the current physics state, cleared by _touch

    # ---- episode flow ------------------------------------------------------------------

    def reset(self):
        self.reset_timers()
        self.perturber.reset()
        self.projectiles.clear()
        self._ui_forces.clear()
        self.reset_characters()
        self._fallen_contact = False
        self._touch()

    def reset_timers(self):
        """DeepMimic's ResetTimers: a new episode limit (the training one, or the test one in test
        mode), time 0."""
        super().reset()
        self._train_time_limit = self.timer.max_time
        self._apply_time_limit()

    def reset_characters(self):
        """Subclasses place the character (imitate: reference state initialisation)."""

    def update(self, timestep):
        """One env update (see the module docstring); a zero step changes nothing."""
        if timestep > 0.0:
            self._run_updates(timestep, 1)

    def advance(self, timestep, max_updates):
        """Updates (each exactly update()) until one needs the caller, at most max_updates: it stops
        after an update that asks for a decision or ends the episode. The updates run past need
        nothing from an RLWorld: no agent acts and check_valid_episode() is True there."""
        if timestep <= 0.0:
            return 1
        return self._run_updates(timestep, max_updates)

    def _run_updates(self, timestep, max_updates):
        """The update loop, in DeepMimic's order per update; returns how many ran. It runs 600 to
        2400 times per simulated second, so its per-update Python is kept to the hooks and checks."""
        world, ctrl, timer, cache = self.world, self.ctrl, self.timer, self._cache
        if timestep != world.timestep:
            world.set_timestep(timestep)
        sim_char, ground, contact_fall = self.sim_char, world.ground, self.enable_contact_fall
        pre_physics, post_physics, is_episode_end = self._pre_physics, self._post_physics, self.is_episode_end
        perturber, projectiles = self.perturber, self.projectiles
        for n in range(1, max_updates + 1):
            timer.time += timestep
            if perturber.active or perturber.params.enable:
                perturber.update(timestep, sim_char)
            if self._ui_forces:
                for body_id, force, pos in self._ui_forces:
                    sim_char.apply_force(body_id, force, pos)
                self._ui_forces.clear()
            pre_physics(timestep)
            ctrl.update(timestep)
            world.step()
            if projectiles.boxes:
                projectiles.update(timer.time)
            ctrl.post_update(timestep)
            self._fallen_contact = contact_fall and sim_char.has_fall_contact(ground)
            cache.clear()
            post_physics(timestep)
            if ctrl.need_new_action or is_episode_end():
                return n
        return max_updates

    def _pre_physics(self, timestep):
        """Hook run after the timers and forces, before the PD command (imitate: the reference
        advances)."""

    def _post_physics(self, timestep):
        """Hook run after the physics step and the fall check, before the episode-end check."""

    def _touch(self):
        """The physics state changed: forget what was computed from it."""
        self._cache.clear()

    def _cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def sim_body_states(self):
        return self._cached("bodies", self.sim_char.get_body_states)

    def sim_pose_vel(self):
        return self._cached("pose_vel", self.sim_char.get_state)

    # ---- termination -------------------------------------------------------------------

    def has_fallen(self):
        return self.has_fallen_contact()

    def has_fallen_contact(self):
        """A fall-contact body touched the ground in the last update (DeepMimic's HasFallenContact)."""
        return self._fallen_contact

    def check_terminate(self, agent_id=0):
        return Terminate.Fail if self.enable_fall_end and self.has_fallen() else Terminate.Null

    def is_episode_end(self):
        timer, cache = self.timer, self._cache
        if timer.time >= timer.max_time:  # timer.is_end(), inlined: this runs after every update
            return True
        terminate = cache.get("terminate")
        if terminate is None:
            terminate = cache["terminate"] = self.check_terminate()
        return terminate != Terminate.Null

    def check_valid_episode(self):
        if not (self.ctrl.need_new_action or self.is_episode_end()):
            return True
        bodies = self.sim_body_states()
        return max(np.abs(bodies.vel).max(), np.abs(bodies.ang_vel).max()) <= VEL_EXPLODE_THRESHOLD

    def resolve_ground_intersect(self):
        """Raise the character so no body is below the ground (+ 1 mm), as cSceneSimChar does."""
        bodies = self.sim_char.get_body_states()
        mins, _ = self.char_desc.body_aabbs(bodies.pos, bodies.rot)
        raise_by = max(0.0, self.world.ground_height + GROUND_PAD - mins[:, 1].min())
        if raise_by > 0.0:
            pose, vel = self.sim_char.get_state()
            pose[1] += raise_by
            self.sim_char.set_state(pose, vel)
        return raise_by

    # ---- agent interface -----------------------------------------------------------------

    def state_names(self, agent_id=0):
        return self.state_layout.entry_names([b.name for b in self.char_desc.bodies])

    def need_new_action(self, agent_id=0):
        return self.ctrl.need_new_action

    def record_state(self, agent_id=0):
        """The policy's state: a copy of calc_state's (which the scene caches until the next update)."""
        return self.calc_state().copy()

    def calc_state(self):
        return self._cached("state", lambda: self.ctrl.record_state(self.sim_body_states(), self.world.ground_height))

    def get_layout_desc(self, agent_id=0):
        return self.ctrl.params.layout_desc()

    def set_action(self, agent_id, action):
        self.ctrl.set_action(action)

    def action_targets(self, action):
        """The PD targets (spherical quaternions, revolute angles) that set_action(action) would
        give the controller now."""
        return self.ctrl.action_layout.to_targets(action)

    def set_mode(self, mode):
        mode = Mode(mode)
        if mode != self.mode:
            self.mode = mode
            self._apply_time_limit()

    def _apply_time_limit(self):
        """The running episode's limit for the current mode: the test limit in test mode, else the
        training limit drawn at the last reset."""
        self.timer.max_time = self.timer_params_end.time_max if self.mode == Mode.TEST else self._train_time_limit

    def set_sample_count(self, count):
        self.sample_count = count
        if self.anneal_samples > 0:
            lerp = float(np.clip(count / self.anneal_samples, 0.0, 1.0)) ** 4
            self.timer.params = self.timer_params.blend(self.timer_params_end, lerp)

    # ---- viewer hooks ---------------------------------------------------------------------

    def draw_characters(self):
        bodies = self.sim_body_states()
        return [(self.char_desc, bodies.pos, bodies.rot, "sim")]

    def camera_focus(self):
        return self.sim_char.get_root_pos()

    def apply_force(self, body_id, force, world_pos):
        """A push (character units) held over the whole next update (all its physics sub-steps)."""
        self._ui_forces.append((body_id, np.asarray(force, dtype=float), np.asarray(world_pos, dtype=float)))

    def throw_projectile(self, big=False):
        self.projectiles.throw(self.sim_char, big, self.rng, self.get_time())

    def draw_projectiles(self):
        return self.projectiles.draw()

    def shutdown(self):
        self.world.shutdown()
