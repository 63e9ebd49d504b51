"""Oracles for differential tests: DeepMimic's own code, never imported by the product.

- wheel_port: the older port in the pybullet wheel (pybullet_envs.deep_mimic), which carries
  DeepMimic's Python learning code (TF1) and a Python state builder for the 2018 layout. It is
  imported with run-time patches, in a process of its own (its TF1 graph mode must not touch a
  process that runs our TF2 code).
"""
