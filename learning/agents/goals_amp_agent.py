"""GoalsAMPAgent (AgentType "GoalsAMP"): the goal-setting hierarchy whose motion prior is AMP's
style reward.

GoalsAgent's three learners (goal policy, goal-conditioned action policy, inverse model) with
AMPAgent's discriminator: the action policy's reward is
    r_t^a = stab_t + MotionPriorWeight x r_t,
r_t the reward an AMPAgent would train on in the same scene (the style reward from the
discriminator as it is after this iteration's update; in a task scene combined with the task
reward as the AMP keys say: TaskRewardLerp, or TaskRewardWeight / DiscRewardWeight). Unlike the
imitation reward, the style reward scores a pose and its motion against the whole motion
dataset, not against one clip at one time, so goals can differ in speed and heading and still be
rewarded for moving like the data. The goal policy's reward is GoalsAgent's (the scene's reward
under habituation, plus the stability reward); with TrainActionPolicy false, the scene's reward
alone (a heading scene's: its task reward), and the discriminator stays as loaded.

Each training iteration: the discriminator's steps (AMPAgent), the action policy's PPO step on
r_t^a, the goal policy's step, the inverse model's (GoalsAgent). Checkpoints hold all four
networks and the AMP observation normaliser in the names each class gives them. The class
composes the two by Python's method order (GoalsAgent, then AMPAgent, then PPOAgent): each
override calls the next, and GoalsAgent asks its base class for the motion prior.
"""
from learning.agents.amp_agent import AMPAgent
from learning.agents.goals_agent import GoalsAgent
from learning.configs.goals_amp_agent import GoalsAMPAgentConfig


class GoalsAMPAgent(GoalsAgent, AMPAgent):
    NAME = "GoalsAMP"
    CONFIG = GoalsAMPAgentConfig

    def _motion_prior_range(self):
        """[r_min, r_max] of the AMP reward (style, or style and task combined)."""
        return self.amp_reward_range
