// Steps as people count them: the first step is step 1, everywhere a person reads a number
// (the counter, the URL's `step=`, the timeline, "Find a step", the poll and its reveal, the quiz
// verdict, a lesson, the divergence banner). The JSON API's indices stay 0-based (a program's
// index: /api/traces/{id}/steps/{index}, a session's `step`, a poll answer): docs/api.md.

/** The number people read for the step at 0-based `index`. */
export const stepNumber = (index) => index + 1;

/** The 0-based index of the step people call `number`. */
export const stepIndexOf = (number) => number - 1;
