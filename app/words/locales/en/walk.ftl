# The walk page's frame as the server writes it (templates/walk.html and its parts). The step
# views, explanations and what static/js/walk writes are not on the words layer yet.

walk-title = Step through
walk-edit = Change model or text
walk-context-more = Tokens, lessons, class
    .title = The tokens, training, the gradient check of every step, lessons and Present to class
walk-controls = Step navigation
walk-prev = Prev
walk-slider = Step
walk-next = Next
walk-details = Details
walk-present = Projector view
    .title = Presenter mode (P; Esc leaves): the step fills the screen. ? lists every key
walk-jump = Jump to
walk-jump-group = Jump to layer
walk-jump-op = Jump to op
walk-sequence = Sequence
walk-timeline = Every step: forward, loss, backward, by layer
walk-diagram = Model diagram
walk-diagram-current = Model:
walk-loading = Running the training step…
walk-noscript = This page draws its figures with JavaScript; please enable it.

## What is being traced (templates/_walk_summary.html)

walk-summary = What is being traced
walk-summary-model = model
walk-summary-checkpoint = { $model } (checkpoint)
walk-summary-random = random init, seed { $seed }
walk-summary-loss = loss
walk-summary-sizes = sizes
walk-summary-config = { $layers } { $layers ->
        [one] layer
       *[other] layers
    }, { $heads } heads ({ $kv_heads } kv), C = { $width }, FFN { $ffn }, V = { $vocab }
walk-summary-tokens = tokens
walk-summary-ids = ids
walk-summary-strip = Input and target tokens

## Training (templates/_training_bar.html)

walk-training = Training
walk-update-step = <strong>Update step:</strong> { $optimizer }
walk-no-update-step = <strong>No update step:</strong> forward and backward only.
walk-trained = trained { $steps } { $steps ->
        [one] step
       *[other] steps
    } on this batch first
walk-untrained = no training before this step
walk-train-more = Train { $steps } steps
walk-train-reset = Back to 0 steps
walk-float64 = Show in float64
    .title = A trained model is sure of its targets: float32 gradients then keep only a few digits (p − onehot with p near 1). The checks run in float64 either way; this shows exact gradients on screen.
walk-train-most = at most { $steps } training { $steps ->
        [one] step
       *[other] steps
    }
walk-train-none = no training: one step would take longer than the server allows
walk-diverged = The numbers broke.
walk-enlarge-head = Head
walk-enlarge-close = Close ✕

## The classroom bar (templates/_class.html)

class-bar = Classroom
class-lesson = Lesson
class-lesson-none = none: the full walkthrough
class-present = Present to class
    .title = Open a session: students join with a code or a QR code and follow this page
class-poll = Bug hunt: which step is broken?
class-dialog = Join the class
class-qr = QR code of the join URL
class-hint-open = Scan the code, or open
class-hint-type = and type
class-loopback = This address only works on this computer: students' phones and laptops cannot open it. Stop the server and start it with <code>xt serve --host 0.0.0.0</code>, then open this page at the address it prints.
class-dialog-start = Start

## The bug lab on the walk page (templates/_buglab_panel.html)

buglab-panel = Bug lab
buglab-planted = Bug lab: a bug is planted in this backward pass
buglab-planted-in = in
buglab-line-correct = correct
buglab-line-faulty = faulty
buglab-loss-unchanged = The loss is unchanged; every gradient the bug touches is not.
buglab-correct-link = The same step without the bug
buglab-quiz-link = Quiz me: hide a random bug
buglab-quiz = Quiz: one op's backward pass has a bug
buglab-quiz-how = The forward pass and the loss are right; one op computes its gradient wrongly. Find where the gradients <em>first</em> go wrong, as you would a real bug: read the numbers, compare a backward step with the correct backward, and spend up to { $probes } probes, each running one step's gradient check. Every verdict stays hidden until you answer. On the broken step, press <strong>This step is broken</strong>.
buglab-new-quiz = A new quiz
buglab-checks = Gradient check of every step
buglab-checks-open = — open to run it
buglab-checks-help = Max relative error of each step's check, log scale; click a bar to go to its step.
buglab-checks-all-pass = Every bar under the dashed tolerance line: the hand-written backward agrees with finite differences.
buglab-checks-first-failing = A backward step checks only what its own op adds, a forward step the full dL/d(its output): so the first failing backward step is the broken op, and the failures spread from it to everything it feeds.
