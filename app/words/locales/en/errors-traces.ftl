# The refusals of the trace, step, tensor and classroom routes a page shows (a 4xx `msg` or
# `detail`, and the busy 503s they lead to): app/answers.py, app/services.py, app/steps/slices.py,
# app/steps/compare.py, app/traces/tensors.py, app/traces/store.py, app/sessions/rules.py,
# app/routes/bench.py and app/routes/sessions.py. Values are code (ids, field, tensor and phase
# names) or the client's own input, quoted as they are; `loc` and `type` never change.

## Why a number is out of range (error-out-of-range's `why`)

error-why-trace-sequences = the trace has { $count } sequence(s)
error-why-trace-positions = the trace has { $count } positions
error-why-model-heads = the model has { $count } heads
error-why-model-layers = the model has { $count } layer(s)
error-why-the-model-layers = the model's layers
error-why-the-model-heads = the model's heads
error-why-the-trace-positions = the trace's positions
error-why-the-trace-steps = the trace's steps
error-why-lesson-steps = lesson { $lesson }'s steps
error-why-the-run-steps = the steps of the run { $run }

## A trace and its steps (app/services.py, app/answers.py)

error-unknown-trace = unknown trace id { $trace }; POST its spec to /api/traces again
error-client-gone = the client closed the connection; its job was cancelled
error-busy-evicted = the trace of { $trace } was evicted { $times } times while this request waited for it
error-step-out-of-range = step { $index } is out of range: this trace has steps 0 to { $last }
error-no-head-grid = step { $index } ({ $name }) shows no grid of attention heads
error-not-a-head-grid = figure must be one of this step's head grids { $grids }, got { $value }
error-diff-costs-probe = comparing step { $index } with the correct backward costs a probe: POST { $path } { $body } first, or answer the quiz
error-diff-no-fault = trace { $trace } runs the correct backward: no fault to compare
error-diff-not-backward = step { $index } is a { $phase } step: faults change backward steps only
error-no-update-step = trace { $trace } has no update step: its spec names no optimizer
error-no-parameter = no parameter named { $name }; this model has: { $names }
error-top-k-between = top_k must be between 1 and { $most }, got { $value }
error-layer-integer = layer must be an integer or "output", got { $value }

## A recorded tensor and a page of it (app/answers.py, app/traces/tensors.py, app/steps/slices.py)

# `reason`: xt_core's refusal (app/spec/core_words.py reads these three into the catalogue)
error-core-no-tensor = no recorded tensor named { $name }
error-core-no-tensor-close = no recorded tensor named { $name }; did you mean { $close }?
error-core-token-ids-no-grad = { $name } are integer token ids: they have no gradient
error-tensor-unknown = { $reason } in trace { $trace }; a step's `shapes` names the tensors it reads and writes
error-tensor-unknown-short = { $reason } in trace { $trace }
error-tensor-too-big-for-json = { $name } has { $entries } entries ({ $shape }), more than the { $most } this server sends as JSON (max_json_tensor_entries); ask for format=npy (the default): a .npy file of { $bytes } bytes that numpy.load reads
error-slice-form = { $field } must be "start:stop" (integers), got { $value }
error-slice-bounds = { $field } must satisfy 0 <= start < stop <= { $size }, got { $value }
error-slice-too-long = { $field } spans { $span }, more than { $most } ({ $setting })
error-at-integers = at must be comma-separated integers, got { $value }
error-at-count = at must give { $count } index(es) for a tensor of shape { $shape }, got { $given }
error-at-between = at[{ $axis }] must be between 0 and { $last }, got { $value }
error-no-token = no token { $token } along { $where } ({ $axes })
error-along-rows = its rows
error-along-cols = its cols
error-along-token-axes = its token axes
error-scalar-no-rows = { $name } is a scalar: it has no rows to page through

## Two traces compared (app/steps/compare.py, app/routes/bench.py, app/traces/store.py)

error-misaligned = trace { $b } does not align with trace { $a }: { $differences }
error-more-differences = and { $count } more
error-differs-config = config.{ $key }: { $a } in a, { $b } in b
error-differs-batch = batch: { $a_seq } × { $a_positions } positions in a, { $b_seq } × { $b_positions } in b
error-differs-steps = steps: { $a } in a, { $b } in b
error-differs-steps-update = steps: { $a } in a, { $b } in b (a { $a_update }, b { $b_update })
error-has-update = has an update step
error-has-no-update = has no update step
error-differs-step = step { $index }: { $a_phase } { $a_name } in a, { $b_phase } { $b_name } in b

## A classroom session (app/sessions/rules.py, app/routes/sessions.py)

error-step-null = step cannot be null: the class is always on some step
error-session-lesson-other-spec = lesson { $lesson } walks through another spec than this session's
error-lesson-step-no-lesson = lesson_step needs a lesson: this session plays none
error-class-spec-or-run = a class follows a walkthrough (spec) or a recorded run's film (run): give one of them
error-film-class-on-film = { $field } needs a walkthrough: this class is on its run's film (open one of the run's steps with run_step first)
error-film-class-no-film = { $field } is a film class's: this class follows a walkthrough, not a recorded run's film
error-film-class-lesson = lesson { $lesson } is not about the run { $run } this class follows
error-film-step-null = film_step cannot be null: the film is always at some step
error-answer-not-backward = step { $step } is not a backward step: the bug is in one of steps { $first } to { $last }
error-no-lesson = no lesson named { $lesson }; GET /api/lessons lists them
error-no-lesson-short = no lesson named { $lesson }
