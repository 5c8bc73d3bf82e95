# The notes under a step's figures and the words of their numbers tables (app/steps/context.py,
# tensors.py, residual.py, output_softmax.py, jacobian.py). Figure titles and axis titles are
# the names' catalogue's.

step-numbers-rows = Numbers: the first { $rows } of { $of_rows } rows.
step-numbers-columns = Numbers: the first { $columns } of { $of_columns } columns.
step-numbers-rows-columns = Numbers: the first { $rows } of { $of_rows } rows and { $columns } of { $of_columns } columns.
step-note-download = Download the tensor for every value.
step-note-masked = Masked (future) keys hold −∞ and are drawn blank.

## The residual add's backward: skip, branch and sum side by side

step-residual-column-skip = skip
step-residual-column-branch = branch
step-residual-column-sum = sum
step-residual-note = Numbers: skip, branch and sum side by side for every feature (skip + branch = sum in every row).
step-residual-note-positions = Numbers: skip, branch and sum side by side for the first { $positions } of { $of_positions } positions (skip + branch = sum in every row).
step-residual-note-features = Numbers: skip, branch and sum side by side for the first { $features } of { $of_features } features (skip + branch = sum in every row).
step-residual-note-positions-features = Numbers: skip, branch and sum side by side for the first { $positions } of { $of_positions } positions and { $features } of { $of_features } features (skip + branch = sum in every row).

## The output softmax's identity (p − onehot)/N, and a softmax row's Jacobian

step-target-label = { $token } (target)
step-identity-recorded = recorded dL/dlogits
step-identity-largest = Largest |dL/dlogits − (p − onehot)/N| over all { $positions } positions and { $tokens } tokens: { $error }.
step-identity-shown = Shown: the { $count } most probable tokens and the target.
step-identity-not-finite = p or dL/dlogits holds NaN or infinite values: the identity cannot be checked.
step-identity-deviates = dL/dlogits deviates from (p − onehot)/N by up to { $error }.
step-jacobian-output-note = Shown: the { $count } most probable tokens and the target; the check covers the whole row.
step-jacobian-attention-note = Keys 0..{ $pos }: later keys are masked, their p is 0 and they take no part.
