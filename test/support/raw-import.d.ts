// A file's text imported with Vite's `?raw` suffix (a migration's SQL, run by a test against its data).
declare module "*.sql?raw" {
  const text: string;
  export default text;
}
