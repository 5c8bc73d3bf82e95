# The page's script: the bug lab and the quiz on the walk page (static/js/walk/buglab.js).

js-buglab-correct = correct
js-buglab-faulty = faulty
js-buglab-planted-here = The planted bug is in this step:
js-quiz-probes-used-none = You used 0 of { $max } { $max ->
        [one] probe
       *[other] probes
    }.
js-quiz-probes-used = You used { $used } of { $max } { $max ->
        [one] probe
       *[other] probes
    } ({ $used ->
        [one] step
       *[other] steps
    } { $steps }).
js-quiz-right = ✓ Right: { $broken } is where the gradients first go wrong.
js-quiz-wrong = ✗ Not quite: you picked { $chosen }. The bug is in { $broken }.
js-quiz-answer = This step is broken
js-quiz-probe = Spend a probe: check this step's gradient ({ $left } of { $max } left)
js-quiz-probes-spent = All { $max } probes spent: the numbers have to do.
js-quiz-probed = You probed this step ({ $probes })
js-buglab-diff-running = Running the correct backward for comparison…
js-buglab-diff = Compare with the correct backward
js-buglab-diff-costly = Compare with the correct backward (costs a probe: { $left } left)
js-buglab-diff-failed = The comparison failed: { $error }
js-buglab-forward-note = Why does a forward step fail? Its check tests dL/d(its output), the gradient the whole backward pass delivers to it. The bug is in a backward step; its damage reaches this tensor.
