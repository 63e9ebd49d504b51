"""The rollout loop: DeepMimic's update_world, and the hooks through which every driver uses it.

update_world(world, time_elapsed) is DeepMimic's frame: num_update_substeps env updates of
time_elapsed / num_update_substeps (one update of 0 when time_elapsed is 0). Before an update the
agents act where the env asks for an action; after it come the episode checks: an invalid episode
(exploding velocities) resets the world and its path is thrown away; an ended one makes the agents
end their paths (store, train, test bookkeeping), then resets the world. The frame stops at either.

Between two decisions no update needs the agents or the checks, so the env runs through them in
one Env.advance call (env/env.py); hooks that must see every update set `each_update` (the same
updates run, one call each).

Drivers and their hooks: training (DeepMimic_Optimizer.py: WorldHooks, DeepMimic's loop as it is),
the viewer (app/viewer.py: a drag force before every update), evaluation (app/evaluate.py:
bookkeeping after every update, episodes cut at a time limit), demonstration recording
(app/record_demos.py: the recorder acts in the agents' place) and the gymnasium wrapper
(app/gym_env.py: the caller acts and handles the episode's end, so the loop returns at the next
decision and never resets).
"""
import sys
from enum import Enum

UNBOUNDED = sys.maxsize     # max_updates of a run that only a decision or the episode's end stops


class WorldEvent(Enum):
    NONE = 0
    EPISODE_END = 1
    INVALID_EPISODE = 2
    NEW_ACTION = 3          # Hooks.act stopped the loop: the caller decides the next action


class Hooks:
    """What a driver adds to the loop; every default does nothing."""

    each_update = False     # True: the env updates one at a time, so the hooks see every update

    def act(self, timestep):
        """Before each run of updates (so at every decision): decisions. True stops the loop
        before the update (WorldEvent.NEW_ACTION)."""
        return False

    def before_update(self, timestep):
        """Right before the env updates."""

    def after_update(self):
        """After an update that left the episode valid and running; True ends the episode there
        (a cut: end_episode runs as for an episode end)."""
        return False

    def end_episode(self):
        """The episode ended (or after_update cut it)."""

    def invalid_episode(self):
        """The episode became invalid."""


class WorldHooks(Hooks):
    """DeepMimic's loop over an RLWorld: its agents act; an ended episode ends the agents' paths,
    then on_episode_end runs, then the world resets; an invalid one resets the world, then
    on_invalid_episode runs. Drivers of a world subclass it."""

    def __init__(self, world):
        self.world = world

    def act(self, timestep):
        self.world.update_agents(timestep)
        return False

    def end_episode(self):
        self.world.end_episode()
        self.on_episode_end()
        self.world.reset()

    def invalid_episode(self):
        self.world.reset()
        self.on_invalid_episode()

    def on_episode_end(self):
        """After the agents ended their paths, before the reset."""

    def on_invalid_episode(self):
        """After the reset."""


def run_updates(env, timestep, max_updates, hooks):
    """Up to max_updates env updates of `timestep` with `hooks` (module docstring); the event that
    stopped them, or WorldEvent.NONE when all ran."""
    remaining = max_updates
    while remaining > 0:
        if hooks.act(timestep):
            return WorldEvent.NEW_ACTION
        hooks.before_update(timestep)
        remaining -= env.advance(timestep, 1 if hooks.each_update else remaining)
        if not env.check_valid_episode():
            hooks.invalid_episode()
            return WorldEvent.INVALID_EPISODE
        if env.is_episode_end() or hooks.after_update():
            hooks.end_episode()
            return WorldEvent.EPISODE_END
    return WorldEvent.NONE


def update_world(world, time_elapsed, hooks=None):
    """DeepMimic's frame update of `world` (module docstring), with WorldHooks(world) by default."""
    num_substeps = world.env.get_num_update_substeps()
    return run_updates(world.env, time_elapsed / num_substeps, 1 if time_elapsed == 0 else num_substeps,
                       hooks or WorldHooks(world))
