"""Training as a film: a recorded run (every step's loss, norms and head scores, checkpoints) and
any of its steps rebuilt bit for bit (docs/film.md).

plan.py     RunPlan: the task, optimizer, checkpoints, probes, and the run's size bound (RunTooLarge)
files.py    the run folder: run.json, steps.npz, checkpoints/; reading it checked (read_run)
record.py   record(plan, folder): the training recorded, then the checkpoints where the loss fell fastest
rebuild.py  replay and rebuild_step(run, s): step s's full Trace, the same bits as the recorded training
attention.py  the attention frames: every head's attention on the probe sequence at some steps (the film's)
composition.py  which gradients build the head: layer L's dL/dW_Q and dL/dW_K split by the writes they read
"""
