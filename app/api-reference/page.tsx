import { ApiReference } from '@/components/api-reference/api-reference';
import { Brand } from '@/components/shell/brand';
import { ThemeToggle } from '@/components/shell/theme-toggle';

export const metadata = { title: 'API reference' };

/**
 * Public, like the document it renders (GET /api/openapi.json holds no data): a program's author
 * with only an API key reads it without a console login. Outside the signed-in layout because
 * Scalar brings its own main landmark.
 */
export default function ApiReferencePage() {
  return (
    <>
      {/* Not a <header>: Scalar's document header is the page's banner landmark. */}
      <nav className="topbar" aria-label="Console">
        {/* A client-side link, not a plain <a> for a full page load: what Scalar leaves on the
            document (body classes, scroll restoration) is undone when the reference unmounts
            (components/api-reference/api-reference.tsx), which covers the back button and every
            other way out too, and the console keeps its session and cached data. */}
        <Brand />
        <div className="topbar-tools">
          <ThemeToggle />
        </div>
      </nav>
      <ApiReference />
    </>
  );
}
