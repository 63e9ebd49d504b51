"""GoalsAgent's config: the goal policy, the inverse model, the stability reward, the habituation,
the motion prior and the frozen-action-policy mode (learning/agents/goals_agent.py)."""
from dataclasses import dataclass

from learning.configs.config import key, range_problems
from learning.configs.pg_agent import net_problems
from learning.configs.ppo_agent import PPOAgentConfig


@dataclass(frozen=True, kw_only=True)
class GoalsAgentConfig(PPOAgentConfig):
    num_goals: int = key("NumGoals", 4)
    goal_steps: int = key("GoalSteps", 10)
    goal_actor_net: str = key("GoalActorNet")
    goal_critic_net: str = key("GoalCriticNet")
    goal_actor_stepsize: float = key("GoalActorStepsize", 0.001)
    goal_critic_stepsize: float = key("GoalCriticStepsize", 0.01)
    goal_momentum: float = key("GoalMomentum", 0.9)
    goal_discount: float = key("GoalDiscount", 0.9)
    goal_lambda: float = key("GoalLambda", 0.95)
    goal_mini_batch_size: int = key("GoalMiniBatchSize", 32)
    goal_entropy_weight: float = key("GoalEntropyWeight", 0.01)
    inverse_model_net: str = key("InverseModelNet")
    inverse_model_stepsize: float = key("InverseModelStepsize", 0.001)
    inverse_model_momentum: float = key("InverseModelMomentum", 0.9)
    inverse_model_goal_error_base: float = key("InverseModelGoalErrorBase", 0.9)
    # state entries (the scene's state names, e.g. "root/vel_x") the inverse model's goal head reads
    # from s_t and s_t+1, through a trunk of its own; empty: the goal head shares the action head's
    # trunk over the whole transition. Goals then part only in what those entries show.
    inverse_model_goal_inputs: tuple[str, ...] = key("InverseModelGoalInputs", ())
    action_error_discount: float = key("ActionErrorDiscount", 0.5)
    action_error_factor: float = key("ActionErrorFactor", 1.0)
    goal_error_factor: float = key("GoalErrorFactor", 1.0)
    stability_habituation_factor: float = key("StabilityHabituationFactor", 0.03)
    stability_restoration_factor: float = key("StabilityRestorationFactor", 0.01)
    reward_habituation_factor: float = key("RewardHabituationFactor", 0.001)
    reward_restoration_factor: float = key("RewardRestorationFactor", 0.001)
    # w of the action policy's reward stab_t + w r_t (r_t: the scene's own reward); 0: stability only
    motion_prior_weight: float = key("MotionPriorWeight", 0.0)
    # false: the action policy, the normalisers and the inverse model stay as loaded (--model_files);
    # the goal policy learns from the scene's reward alone
    train_action_policy: bool = key("TrainActionPolicy", True)
    # the value of the chosen goal's entry in the action policy's one-hot goal input (the others
    # 0): above 1 the goals start further apart, as a goal's first-layer weights count that much more
    goal_input_scale: float = key("GoalInputScale", 1.0)
    # false: the scene's goal (a task's target) is the goal policy's input only, so the action
    # policy acts on its state and the chosen goal and cannot follow the task by itself
    action_policy_env_goal: bool = key("ActionPolicyEnvGoal", True)
    # --init_model_files from a goal-conditioned policy (e.g. a heading task's): one command per
    # goal, in the checkpoint's goal layout; goal k then starts as that policy under command k
    # (learning/checkpoint.py, goal_commands_as_one_hot). Empty: the one-hot rows keep their draw.
    init_goal_commands: tuple[tuple[float, ...], ...] = key("InitGoalCommands", ())
    # false: the goal policy (actor and critic) sees the scene's goal alone, not the state, so that
    # on a task scene it maps the task's target to a goal without first learning which of the
    # state's entries to ignore; started from a checkpoint (--init_model_files), it starts afresh
    goal_policy_state: bool = key("GoalPolicyState", True)

    def problems(self):
        yield from super().problems()
        yield from net_problems(("GoalActorNet", self.goal_actor_net), ("GoalCriticNet", self.goal_critic_net),
                                ("InverseModelNet", self.inverse_model_net))
        yield from range_problems(">= 2", ("NumGoals", self.num_goals))
        yield from range_problems(">= 1", ("GoalSteps", self.goal_steps), ("GoalMiniBatchSize", self.goal_mini_batch_size))
        yield from range_problems("> 0", ("GoalActorStepsize", self.goal_actor_stepsize),
                                  ("GoalCriticStepsize", self.goal_critic_stepsize),
                                  ("InverseModelStepsize", self.inverse_model_stepsize),
                                  ("GoalInputScale", self.goal_input_scale))
        yield from range_problems("in [0, 1)", ("GoalMomentum", self.goal_momentum),
                                  ("InverseModelMomentum", self.inverse_model_momentum),
                                  ("GoalDiscount", self.goal_discount))
        yield from range_problems("in [0, 1]", ("GoalLambda", self.goal_lambda),
                                  ("ActionErrorDiscount", self.action_error_discount),
                                  ("StabilityHabituationFactor", self.stability_habituation_factor),
                                  ("StabilityRestorationFactor", self.stability_restoration_factor),
                                  ("RewardHabituationFactor", self.reward_habituation_factor),
                                  ("RewardRestorationFactor", self.reward_restoration_factor))
        yield from range_problems("in (0, 1)", ("InverseModelGoalErrorBase", self.inverse_model_goal_error_base))
        yield from range_problems(">= 0", ("ActionErrorFactor", self.action_error_factor),
                                  ("GoalErrorFactor", self.goal_error_factor),
                                  ("GoalEntropyWeight", self.goal_entropy_weight),
                                  ("MotionPriorWeight", self.motion_prior_weight))
        if len(set(self.inverse_model_goal_inputs)) != len(self.inverse_model_goal_inputs):
            yield "InverseModelGoalInputs", f"names an entry twice: {list(self.inverse_model_goal_inputs)}"
        commands = self.init_goal_commands
        if commands and len(commands) != self.num_goals:
            yield "InitGoalCommands", f"needs one command per goal (NumGoals {self.num_goals}), got {len(commands)}"
        elif commands and (not commands[0] or len({len(c) for c in commands}) != 1):
            yield "InitGoalCommands", f"commands must be non-empty and of one length, got {[list(c) for c in commands]}"
        if not self.train_action_policy and self.motion_prior_weight != 0:
            yield "MotionPriorWeight", (f"must be 0 when TrainActionPolicy is false (the frozen action policy "
                                        f"learns from no reward), got {self.motion_prior_weight}")
