# A lesson about a recorded run (app/lessons/run_claims.py, run_lesson.py; docs/lessons.md): its
# claims about the run, what the run measured, and the lesson player's words for its stops.

lesson-against-run = the run { $run }
lesson-against-run-step = step { $step } of the run { $run }
lesson-run-film-title = The run's film at step { $step }
lesson-run-no-heads = none

lesson-run-claim-plateau = the loss (averaged over { $window } steps) falls by less than { FORMAT($fall, spec: ".3g") } per 100 steps for { $condition } steps in a row before its steepest fall
lesson-run-measured-plateau = from step { $first } to step { $last }: { $length } steps
lesson-run-measured-plateau-none = no such stretch ends before the steepest fall (step { $steepest })
lesson-run-claim-loss = the loss averaged over steps { $first } to { $last } is { $condition }
lesson-run-claim-crossing-induction = layer { $layer }'s best induction score first passes { FORMAT($above, spec: ".3g") } at a step { $condition }
lesson-run-claim-crossing-previous = layer { $layer }'s best previous-token score first passes { FORMAT($above, spec: ".3g") } at a step { $condition }
lesson-run-measured-crossing = at step { $step } (head { $head }, { FORMAT($score, spec: ".3g") })
lesson-run-measured-crossing-never = it never does
lesson-run-claim-score-induction = the induction score of head { $head } of layer { $layer } at step { $step } is { $condition }
lesson-run-claim-score-previous = the previous-token score of head { $head } of layer { $layer } at step { $step } is { $condition }
lesson-run-claim-heads-induction = at step { $step }, the heads of layer { $layer } with an induction score above { FORMAT($above, spec: ".3g") } are: { $heads }
lesson-run-claim-heads-previous = at step { $step }, the heads of layer { $layer } with a previous-token score above { FORMAT($above, spec: ".3g") } are: { $heads }
lesson-run-measured-heads = measured: { $heads }
lesson-run-claim-composition-summed = over the { $ahead } steps from step { $step }, the part of layer { $layer }'s gradient of { $weight } that reads heads { $heads } of layer { $before } has a share { $condition } of the gradient
lesson-run-claim-composition-summed-best = over the { $ahead } steps from step { $step }, the part of layer { $layer }'s gradient of { $weight } that reads heads { $heads } of layer { $before } has a share { $condition } of the gradient, and points closer to the change of { $weight } than the part of any other head
lesson-run-claim-composition-one-step = at step { $step }, the part of layer { $layer }'s gradient of { $weight } that reads heads { $heads } of layer { $before } has a share { $condition } of the gradient
lesson-run-claim-composition-one-step-best = at step { $step }, the part of layer { $layer }'s gradient of { $weight } that reads heads { $heads } of layer { $before } has a share { $condition } of the gradient, and points closer to the change of { $weight } over the next { $ahead } steps than the part of any other head
lesson-run-measured-composition = share { FORMAT($share, spec: ".3g") }; cosine with the change at least { FORMAT($cosine, spec: ".3g") }, the other heads' at most { FORMAT($others, spec: ".3g") }

lesson-run-no-class = lesson { $lesson } is about a recorded run: its stops are on the film and on several steps' pages, and this class follows one walkthrough (open a class on the run's film instead: POST /api/sessions with run)

js-lesson-run-going = Opening stop { $stop }…
