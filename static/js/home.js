// The home page (the entry module of templates/home.html; its parts live in home/): example
// texts and a live token count, the model list (presets fill in the sizes), the update step's
// defaults and limit for the chosen model, the bug-lab picker, and the checkpoint upload. The form works without this script; it only adds conveniences.

import { wireBuglabPicker } from "./home/buglab_picker.js";
import { wireModelList } from "./home/model_list.js";
import { wirePrecisionFields } from "./home/precision.js";
import { createTextField } from "./home/text.js";
import { wireTrainingFields } from "./home/training.js";
import { wireUpload } from "./home/upload.js";

const form = document.getElementById("start-form");
const modelSelect = document.getElementById("f-model");
// Checkpoints by name: filled from /api/models (an upload adds itself), read by the token count.
const checkpoints = new Map();
const checkpointOf = () => checkpoints.get(modelSelect.value);
const training = wireTrainingFields(checkpointOf);
const text = createTextField(form, checkpointOf, training.setLimit);
wireModelList(form, { checkpoints, text });
wireUpload();
wireBuglabPicker();
wirePrecisionFields();
