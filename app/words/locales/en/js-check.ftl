# The page's script: a step's gradient check (static/js/walk/gradcheck_view.js) and the chart of
# every step's check (static/js/walk/checks_chart.js).

js-check-covers-backward = this op's contribution
js-check-covers-backward-long = Checks only the gradient this op's backward adds to each of its inputs, computed from the gradient that arrived: a wrong arriving gradient makes it wrong too, so red here means the mistake is in this op or in a backward op above it (nearer the loss). Going backward from the loss, the first red step is the broken one.
js-check-covers-forward = full dL/d(output)
js-check-covers-forward-long = Checks the full gradient of this step's output, dL/d(output), which is not drawn on this forward step: the whole backward pass from the loss down to here computed it, so a mistake in any of those backward ops turns this badge red too. Walk the backward steps from the loss to find the op.
js-check-covers-update = the gradient the optimizer used
js-check-covers-update-long = Checks the gradient of every parameter at once, the one the optimizer stepped along.
js-check-none = no grad check for this step
js-check-pending = grad check: checking…
    .title = This model's check replays its layers in float64: it runs now and shows here when done
js-check-sealed = grad check hidden until you answer
    .title = A quiz keeps every verdict until you answer; spend a probe to run this step's check
js-check-verdict-float64 = ✓ in float64
js-check-badge = grad check of { $what } { $verdict } max rel err { $error } (tol { $tolerance })
    .title = { $covers } A seeded random direction u: ⟨g, u⟩ against the finite difference (L(X+δ·u) − L(X−δ·u)) / 2δ, in float64.
js-check-badge-broken = grad check of { $what } { $verdict } max rel err { $error } (tol { $tolerance }) · the float32 values here are NaN/inf
js-check-could-not-run = grad check could not run: { $error }
js-check-overflowed = This trace is float32 and its values at this step overflowed to NaN/inf. The same step computed in float64 (same weights, tokens and bugs) checks fine: the backward rule is right, the float32 numbers on screen are not.
js-check-roundoff = This trace is float32: the check runs on the same step computed in float64 (same weights, tokens and bugs). The float32 gradient on screen differs from it by { $roundoff } (round-off, not a wrong gradient).
js-check-extrapolated-passed = Along this u the loss curves too strongly for one central difference: it was taken at several step sizes and extrapolated, which pins the derivative down to { $resolution } (relative). Within that the analytic gradient agrees; a wrong gradient is far outside it.
js-check-extrapolated-failed = Along this u the loss curves too strongly for one central difference: it was taken at several step sizes and extrapolated, which pins the derivative down to { $resolution } (relative). The analytic gradient is outside that: a failing row's error is what is left beyond the resolution, at least.
js-check-tiny-floor = a tiny floor
js-check-measure = rel error = |a − n| / max(|a|, |n|, { $floor }), a the analytic and n the numeric value: how far apart they are relative to their size. Central differences in float64 at this step size are typically good to about 10 digits, so a right gradient stays far below the tolerance and a wrong one far above it.
js-check-measure-tolerance = rel error = |a − n| / max(|a|, |n|, { $floor }), a the analytic and n the numeric value: how far apart they are relative to their size. A tolerance of { $tolerance } asks the two to agree to about { $digits } significant digits. Central differences in float64 at this step size are typically good to about 10 digits, so a right gradient stays far below the tolerance and a wrong one far above it.
js-check-col-tensor = tensor
js-check-col-analytic = analytic
js-check-col-numeric = numeric
js-check-col-rel-error = rel error
js-check-how = How the gradient was checked
js-check-how-text = For a random direction u: analytic = ⟨g, u⟩, g the gradient checked ({ $what }); numeric = (L(X+δ·u) − L(X−δ·u)) / 2δ, a central difference in float64 with a small step δ. { $covers }
js-check-step-name = step { $number }: { $title }
js-check-cell-failed = gradient check FAILED
js-check-progress = Checking every step's gradient… { $done } of { $total } done.
js-check-all-pass = All { $total } steps pass: every gradient agrees with finite differences of the loss.
js-check-some-fail = { $failing } of { $total } steps { $failing ->
        [one] fails
       *[other] fail
    }; the first failing backward step is { $first }.
js-check-busy = The server is busy checking other traces; trying again in a few seconds…
js-check-failed = The checks could not be computed: { $error }
