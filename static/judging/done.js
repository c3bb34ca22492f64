// The end page of a protocol with a page of its own (templates/judging/_protocol_done.html):
// no form, only the shared keys of judge_form.js: Backspace (the previous link's data-keys)
// back to the last item, ? for the instructions.
import { judgeForm } from "./judge_form.js";

judgeForm({ doneText: "", missingText: "" });
