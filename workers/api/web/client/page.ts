/** What the server's shell tells a page: where to render, and the project in view (if any). */
export type PageContext = {
  root: HTMLElement;
  projectId: string;
};
