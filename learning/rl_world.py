"""RLWorld: an environment and one agent per agent file, stepped as DeepMimic steps them.

Data flow of one sub-step (update_world splits a frame of 1/60 s into num_update_substeps):
agents first (a new action when the env asks for one), then the env; then the episode checks:
an invalid episode (exploding velocities) resets the world and its path is thrown away; an
episode end makes the agents finish their paths (store, train, test bookkeeping), then resets.
"""
import os
from enum import Enum

from env.env import Mode
from learning import agent_builder, checkpoint
from learning.tf_util import limit_tf_threads, seed_rank
from util.logger import Logger


class WorldEvent(Enum):
    NONE = 0
    EPISODE_END = 1
    INVALID_EPISODE = 2


class RLWorld:
    """Args read: agent_files, model_files, train_agents (one per agent; 'none' allowed for the
    first two), output_path, int_output_path, resume (continue from output_path's checkpoints),
    tensorboard (default true: rank 0 writes each agent's log rows and the mean reward terms as
    TensorBoard scalars into output_path/tensorboard/agent<id>)."""

    def __init__(self, env, arg_parser):
        self.env = env
        self.arg_parser = arg_parser
        num_agents = env.get_num_agents()
        self.train_agents = arg_parser.parse_bools("train_agents")
        agent_files = arg_parser.parse_strings("agent_files")
        model_files = arg_parser.parse_strings("model_files")
        for key, vals in (("train_agents", self.train_agents), ("agent_files", agent_files),
                          ("model_files", model_files)):
            if len(vals) not in (0, num_agents):
                raise ValueError(f"--{key} lists {len(vals)} value(s) for {num_agents} agent(s)")
        if len(agent_files) != num_agents:
            raise ValueError(f"--agent_files must list one file (or none) per agent ({num_agents})")
        self.output_path = arg_parser.parse_string("output_path")
        self.int_output_path = arg_parser.parse_string("int_output_path")
        self.resume = arg_parser.parse_bool("resume", False)
        self.tensorboard = arg_parser.parse_bool("tensorboard", True)
        if self.resume and not self.output_path:
            raise ValueError("--resume needs --output_path (the run to continue)")
        self.enable_training = True
        self.agents = [self._build_agent(i, agent_files[i], model_files[i] if model_files else "none")
                       for i in range(num_agents)]
        self.set_enable_training(True)

    def _build_agent(self, id, agent_file, model_file):
        if agent_file == "none":
            return None
        agent = agent_builder.build_agent(self, id, agent_file)
        agent.set_output_dirs(self.output_path, self.int_output_path, append_log=self.resume)
        if self.tensorboard and self.output_path:
            agent.logger.configure_tensorboard(os.path.join(self.output_path, "tensorboard", f"agent{id}"))
        Logger.print(str(agent))
        if self.resume:
            prefix = agent.get_output_path()
            agent.load_model(prefix)
            agent.load_resume_state(checkpoint.read_resume_state(prefix))
        elif model_file != "none":
            agent.load_model(model_file)
        return agent

    def set_enable_training(self, enable):
        """Training on or off for every agent (as train_agents allows); the env's mode follows
        agent 0: TRAIN while it trains, else TEST (final episode-length limits)."""
        self.enable_training = enable
        is_train_mode = enable
        for i, agent in enumerate(self.agents):
            if agent is not None:
                agent.set_enable_training(enable and (self.train_agents[i] if self.train_agents else True))
                if i == 0:
                    is_train_mode = agent.enable_training
        self.env.set_mode(Mode.TRAIN if is_train_mode else Mode.TEST)

    def update(self, timestep):
        for agent in self.agents:
            if agent is not None:
                agent.update(timestep)
        self.env.update(timestep)

    def advance(self, timestep, max_updates):
        """update(timestep) repeated while nothing needs the agents or the episode checks, at most
        max_updates times (env.advance, env/env.py); returns how many sub-steps ran."""
        for agent in self.agents:
            if agent is not None:
                agent.update(timestep)
        return self.env.advance(timestep, max_updates)

    def reset(self):
        for agent in self.agents:
            if agent is not None:
                agent.reset()
        self.env.reset()

    def end_episode(self):
        for agent in self.agents:
            if agent is not None:
                agent.end_episode()

    def save_outputs(self):
        """Final checkpoints and resume states (rank 0, when output_path is set)."""
        for agent in self.agents:
            if agent is not None:
                agent.save_outputs()

    def shutdown(self):
        self.env.shutdown()


def _check_episode(world, on_episode_end):
    """The checks after a sub-step: an invalid episode resets; an ended one makes the agents end
    their paths, runs on_episode_end(world), then resets."""
    env = world.env
    if not env.check_valid_episode():
        world.reset()
        return WorldEvent.INVALID_EPISODE
    if env.is_episode_end():
        world.end_episode()
        if on_episode_end is not None:
            on_episode_end(world)
        world.reset()
        return WorldEvent.EPISODE_END
    return WorldEvent.NONE


def step_world(world, timestep, on_episode_end=None):
    """One sub-step: update, then the validity and episode-end checks. on_episode_end(world) runs
    after the agents ended their paths and before the reset."""
    world.update(timestep)
    return _check_episode(world, on_episode_end)


def update_world(world, time_elapsed):
    """DeepMimic's frame update: num_update_substeps sub-steps of time_elapsed / substeps (one
    sub-step of 0 when time_elapsed is 0); stops early at an episode end or invalid episode.

    The same as step_world per sub-step, run in runs: the agents are asked, then env.advance runs
    sub-steps until one where an agent needs an action or the episode ends (env/env.py), and the
    checks follow; the sub-steps in between are ones where the agents and the checks do nothing."""
    num_substeps = world.env.get_num_update_substeps()
    timestep = time_elapsed / num_substeps
    remaining = 1 if time_elapsed == 0 else num_substeps
    while remaining > 0:
        remaining -= world.advance(timestep, remaining)
        event = _check_episode(world, None)
        if event != WorldEvent.NONE:
            return event
    return WorldEvent.NONE


def build_world(arg_parser, enable_draw=False):
    """DeepMimicEnv(arg_parser, enable_draw) and its RLWorld. With --rand_seed, numpy, random, TF
    and the scene are seeded with rand_seed + 1000 * rank (ranks must not share episodes)."""
    from env.deepmimic_env import DeepMimicEnv
    limit_tf_threads()
    seed = seed_rank(arg_parser.parse_int("rand_seed", at_least=0)) if arg_parser.has_key("rand_seed") else None
    return RLWorld(DeepMimicEnv(arg_parser, enable_draw, seed=seed), arg_parser)
