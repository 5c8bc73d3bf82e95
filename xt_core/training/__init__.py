"""Training: the optimizers, the update they make, and short training runs.

optim.py          SGD and AdamW by hand (torch.optim's rules) and the recorded update
update_blocks.py  an update made block of rows by block of rows (a real model's)
loop.py           train_step (the step's last part, the update) and train (a short run)
"""
