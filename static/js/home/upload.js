// The home page's checkpoint upload: POST /api/models (multipart), then the new model joins
// the model list (home/model_list.js listens for "xt:model-uploaded") and is selected.

import { uploadCheckpoint } from "../lib/api.js";
import { t } from "../lib/words.js";

export function wireUpload() {
  const form = document.getElementById("upload-form");
  const input = document.getElementById("upload-file");
  const status = document.getElementById("upload-status");
  const button = document.getElementById("upload-button");
  if (!form) return;

  function show(text, kind) {
    status.textContent = text;
    status.className = `upload-status ${kind}`;
  }

  async function upload(event) {
    event.preventDefault();
    const file = input.files?.[0];
    if (!file) {
      show(t("home-upload-choose"), "upload-error");
      return;
    }
    button.disabled = true;
    show(t("home-upload-busy", { file: file.name }), "upload-busy");
    try {
      const answer = await uploadCheckpoint(file);
      show(t("home-upload-added", { model: answer.model.label }), "upload-ok");
      document.dispatchEvent(new CustomEvent("xt:model-uploaded", { detail: answer.model }));
    } catch (error) {
      // status 0: the request never got an answer; else the server refused the file
      show(t(error.status ? "home-upload-refused" : "home-upload-failed", { error: error.message }), "upload-error");
    } finally {
      button.disabled = false;
    }
  }

  form.addEventListener("submit", upload);
}
