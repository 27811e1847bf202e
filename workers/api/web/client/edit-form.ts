import { ApiProblem } from "./api.js";
import { clear, h } from "./dom.js";

// The forms of the resource pages (alerts, channels, maps, threshold profiles, content): labelled
// fields, one submit that shows the API's problem `detail` inside the form when it refuses (the
// field it names gets aria-invalid and focus), and row actions that ask before they destroy.

export type FieldSpec =
  | {
      name: string;
      label: string;
      kind: "text" | "number" | "url" | "file" | "textarea";
      required?: boolean;
      placeholder?: string;
      step?: string;
      min?: string;
      max?: string;
      accept?: string;
      hint?: string;
    }
  | {
      name: string;
      label: string;
      kind: "select";
      options: { value: string; label: string }[];
      required?: boolean;
      hint?: string;
    };

export type FieldEl = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** A labelled control; its id is `<formId>-<name>` so several forms can sit on one page. */
export function field(formId: string, spec: FieldSpec): { wrap: HTMLElement; input: FieldEl } {
  const id = `${formId}-${spec.name}`;
  let input: FieldEl;
  if (spec.kind === "select") {
    input = h(
      "select",
      { id, name: spec.name, required: spec.required },
      spec.options.map((o) => h("option", { value: o.value }, o.label)),
    );
  } else if (spec.kind === "textarea") {
    input = h("textarea", { id, name: spec.name, rows: 3, placeholder: spec.placeholder });
  } else {
    input = h("input", {
      id,
      name: spec.name,
      type: spec.kind,
      required: spec.required,
      placeholder: spec.placeholder,
      step: spec.step,
      min: spec.min,
      max: spec.max,
      accept: spec.accept,
    });
  }
  const hintId = spec.hint ? `${id}-hint` : undefined;
  if (hintId) {
    input.setAttribute("aria-describedby", hintId);
  }
  const wrap = h(
    "label",
    { for: id },
    spec.label,
    input,
    spec.hint ? h("small", { id: hintId, class: "muted" }, spec.hint) : null,
  );
  return { wrap, input };
}

/**
 * Runs `action` on submit. While it runs the submit button is disabled (no double posts); a refusal
 * shows the problem's `detail` in the form's alert, marks the named field invalid and focuses it.
 * `action` returns what to announce on success (or nothing).
 */
export function onSubmit(form: HTMLFormElement, action: () => Promise<string | undefined>): void {
  const status = h("p", { class: "form-status", role: "status" });
  const alert = h("p", { class: "state error", role: "alert", hidden: true });
  form.append(alert, status);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void (async () => {
      const submit = form.querySelector<HTMLButtonElement>("button[type=submit]");
      if (submit) {
        submit.disabled = true;
      }
      alert.hidden = true;
      status.textContent = "";
      for (const el of form.querySelectorAll("[aria-invalid]")) {
        el.removeAttribute("aria-invalid");
      }
      try {
        const done = await action();
        status.textContent = done ?? "";
      } catch (err) {
        showProblem(form, alert, err);
      } finally {
        if (submit) {
          submit.disabled = false;
        }
      }
    })();
  });
}

function showProblem(form: HTMLFormElement, alert: HTMLElement, err: unknown): void {
  clear(alert);
  alert.append(
    err instanceof ApiProblem ? err.detail : err instanceof Error ? err.message : "Something went wrong.",
  );
  alert.hidden = false;
  // The API names the field as json.x (a JSON body), form.x (multipart) or query.x; the form's control
  // of that name gets focus.
  const name =
    err instanceof ApiProblem ? /^(?:json|body|form|query)\.([A-Za-z]+)/.exec(err.field ?? err.detail) : null;
  const target = name?.[1] ? form.querySelector<HTMLElement>(`[name="${name[1]}"]`) : null;
  if (target) {
    target.setAttribute("aria-invalid", "true");
    target.focus();
  } else {
    alert.focus();
  }
}

/** A row action that changes or removes something: asks first when `confirm` is given. */
export function rowAction(
  label: string,
  ariaLabel: string,
  act: () => Promise<void>,
  onError: (err: unknown) => void,
  confirmText?: string,
): HTMLButtonElement {
  const button = h("button", { type: "button", "aria-label": ariaLabel }, label);
  button.addEventListener("click", () => {
    if (confirmText && !window.confirm(confirmText)) {
      return;
    }
    button.disabled = true;
    act()
      .catch(onError)
      .finally(() => {
        button.disabled = false;
      });
  });
  return button;
}

/** An alert region above a list for the errors of its row actions (delete, deactivate). */
export function actionAlert(): { el: HTMLElement; show(err: unknown): void; hide(): void } {
  const el = h("p", { class: "state error", role: "alert", hidden: true });
  return {
    el,
    show(err) {
      clear(el);
      el.append(err instanceof ApiProblem ? err.detail : err instanceof Error ? err.message : String(err));
      el.hidden = false;
    },
    hide() {
      el.hidden = true;
    },
  };
}

/** A text input's value, or null when blank (the API's "not set"). */
export function textOrNull(el: FieldEl): string | null {
  const v = el.value.trim();
  return v === "" ? null : v;
}

/** A number input's value as a number, or null when blank. */
export function numberOrNull(el: FieldEl): number | null {
  const v = el.value.trim();
  return v === "" ? null : Number(v);
}
