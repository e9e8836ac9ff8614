'use client';

import { ApiReferenceReact } from '@scalar/api-reference-react';
import '@scalar/api-reference-react/style.css';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { readTheme } from '@/components/shell/theme';
import { useMediaQuery } from '@/components/ui/use-media-query';
import styles from './api-reference.module.css';
import { labelRegions } from './label-regions';

/** The document every route of lib/api/routes.ts is described in (app/api/openapi.json). */
const DOCUMENT_URL = '/api/openapi.json';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('themechange', onChange);
  window.addEventListener('storage', onChange);
  return () => {
    window.removeEventListener('themechange', onChange);
    window.removeEventListener('storage', onChange);
  };
}

/**
 * The lock service and admin API's reference, rendered by Scalar from the OpenAPI document. A
 * reference, not a client: the "send a request" buttons are off (a request from this page would
 * carry the operator's session), and nothing is fetched from elsewhere (fonts, telemetry: the
 * console's CSP allows only its own origin anyway). It follows the console's theme.
 */
export function ApiReference() {
  const choice = useSyncExternalStore(subscribe, readTheme, () => 'system' as const);
  const systemDark = useMediaQuery('(prefers-color-scheme: dark)');
  const dark = choice === 'system' ? systemDark : choice === 'dark';
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = root.current;
    if (!el) return;
    labelRegions(el);
    const observer = new MutationObserver(() => labelRegions(el));
    observer.observe(el, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={root} className={styles.reference} data-testid="api-reference">
      <ApiReferenceReact
        key={dark ? 'dark' : 'light'}
        configuration={{
          url: DOCUMENT_URL,
          // Scalar's hosted AI agent would send the document elsewhere.
          agent: { disabled: true },
          hideSearch: false,
          withDefaultFonts: false,
          telemetry: false,
          hideClientButton: true,
          hideTestRequestButton: true,
          showDeveloperTools: 'never',
          hideDarkModeToggle: true,
          forceDarkModeState: dark ? 'dark' : 'light',
          documentDownloadType: 'json',
          layout: 'modern',
        }}
      />
    </div>
  );
}
