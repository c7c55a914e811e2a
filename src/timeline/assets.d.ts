// The page's script and style, bundled as text (`with { type: "text" }`).
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*/client.js" {
  const text: string;
  export default text;
}
