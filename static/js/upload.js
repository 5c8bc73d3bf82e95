// The home page's checkpoint upload: POST /api/models (multipart), then the new model joins
// the model list (home.js listens for "xt:model-uploaded") and is selected.

const form = document.getElementById("upload-form");
const input = document.getElementById("upload-file");
const status = document.getElementById("upload-status");
const button = document.getElementById("upload-button");

/** The person-readable message of an error answer: {"detail": "..."} or [{loc, msg}]. */
function message(body, code) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail) && detail.length) return detail.map((d) => d.msg).join("; ");
  return `the server answered ${code}`;
}

function show(text, kind) {
  status.textContent = text;
  status.className = `upload-status ${kind}`;
}

async function upload(event) {
  event.preventDefault();
  const file = input.files && input.files[0];
  if (!file) {
    show("Choose a checkpoint file first.", "upload-error");
    return;
  }
  const body = new FormData();
  body.append("file", file, file.name);
  button.disabled = true;
  show(`Uploading ${file.name}…`, "upload-busy");
  try {
    const response = await fetch("/api/models", { method: "POST", body, headers: { Accept: "application/json" } });
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    if (!response.ok || !answer) {
      show(`Not accepted: ${message(answer, response.status)}`, "upload-error");
      return;
    }
    show(`Added ${answer.model.label}: it is selected in the model list above.`, "upload-ok");
    document.dispatchEvent(new CustomEvent("xt:model-uploaded", { detail: answer.model }));
  } catch (error) {
    show(`Upload failed: ${error.message}`, "upload-error");
  } finally {
    button.disabled = false;
  }
}

if (form) form.addEventListener("submit", upload);
