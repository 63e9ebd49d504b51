"""RLWorld: an environment and one agent per agent file (DeepMimic's RLWorld).

The world builds its agents from the args (their files, models, training flags, output paths) and
hands each what it needs beyond the env: a GAIL agent's demonstrations (--demo_file, checked
against the env). app/rollout.py steps it (update_world); app/build.py builds it with its env.
"""
import os

from env.env import Mode
from learning import agent_builder
from learning.configs.config import ConfigError
from learning.demos import load_demos_for
from learning.resume_state import paired_checkpoint
from util.logger import Logger


class RLWorld:
    """Args read: agent_files, model_files, init_model_files, train_agents (one per agent; 'none'
    allowed for the first three), output_path, int_output_path, resume (continue from
    output_path's checkpoints), tensorboard (default true: rank 0 writes each agent's log rows and
    the mean reward terms as TensorBoard scalars into output_path/tensorboard/agent<id>)."""

    def __init__(self, env, arg_parser):
        self.env = env
        self.arg_parser = arg_parser
        num_agents = env.get_num_agents()
        self.train_agents = arg_parser.parse_bools("train_agents")
        agent_files = arg_parser.parse_strings("agent_files")
        model_files = arg_parser.parse_strings("model_files")
        init_files = arg_parser.parse_strings("init_model_files")
        for key, vals in (("train_agents", self.train_agents), ("agent_files", agent_files),
                          ("model_files", model_files), ("init_model_files", init_files)):
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
        self.agents = [self._build_agent(i, agent_files[i], model_files[i] if model_files else "none",
                                         init_files[i] if init_files else "none")
                       for i in range(num_agents)]
        self.set_enable_training(True)

    def _build_agent(self, id, agent_file, model_file, init_file):
        """The agent of agent_file; its model from its own run's checkpoint (--resume), else from
        model_file, else its training starts from init_file (TFAgent.init_model: another agent's
        checkpoint, e.g. a shipped skill's, under a policy whose input adds a goal)."""
        if agent_file == "none":
            return None
        agent = agent_builder.build_agent(self, id, agent_file)
        agent.set_output_dirs(self.output_path, self.int_output_path, append_log=self.resume)
        if self.tensorboard and self.output_path:
            agent.logger.configure_tensorboard(os.path.join(self.output_path, "tensorboard", f"agent{id}"))
        Logger.print(str(agent))
        if self.resume:
            model, state = paired_checkpoint(agent.get_output_path())
            agent.load_model(model)
            agent.load_resume_state(state)
        elif model_file != "none":
            agent.load_model(model_file)
        elif init_file != "none":
            agent.init_model(init_file)
        return agent

    def load_demos(self, agent_id, agent_type):
        """The demonstrations --demo_file names, checked against the env (for agents that learn
        from them: NEEDS_DEMOS); --demo_episodes N > 0 keeps the file's first N episodes."""
        demo_file = self.arg_parser.parse_string("demo_file")
        if not demo_file:
            raise ConfigError(f"AgentType: {agent_type} needs --demo_file (a dataset written by DeepMimic.py "
                              "--record_demos)")
        num_episodes = self.arg_parser.parse_int("demo_episodes", 0, at_least=0)
        return load_demos_for(demo_file, self.env, agent_id, num_episodes)

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

    def update_agents(self, timestep):
        """Each agent acts if the env asks it for an action (app/rollout.py runs the env)."""
        for agent in self.agents:
            if agent is not None:
                agent.update(timestep)

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

