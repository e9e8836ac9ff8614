'use client';

import { ApiReferenceReact } from '@scalar/api-reference-react';
import '@scalar/api-reference-react/style.css';
import { useEffect, useLayoutEffect, useMemo, useRef } from 'react';
import { useThemeChoice } from '@/components/shell/use-theme-choice';
import { useMediaQuery } from '@/components/ui/use-media-query';
import styles from './api-reference.module.css';
import { addsExampleCard, labelRegions } from './label-regions';

/** The document every route of lib/api/routes.ts is described in (app/api/openapi.json). */
const DOCUMENT_URL = '/api/openapi.json';
/** Where Scalar's hosted services would be: nowhere (see the configuration below). */
const SCALAR_SERVICES_OFF = '/api-reference/no-external-services';

/**
 * The lock service and admin API's reference, rendered by Scalar from the OpenAPI document. A
 * reference, not a client: the "send a request" buttons are off (a request from this page would
 * carry the operator's session), and nothing is fetched from elsewhere (fonts, telemetry: the
 * console's CSP allows only its own origin anyway). It follows the console's theme.
 */
export function ApiReference() {
  const choice = useThemeChoice();
  const systemDark = useMediaQuery('(prefers-color-scheme: dark)');
  const dark = choice === 'system' ? systemDark : choice === 'dark';
  const root = useRef<HTMLDivElement>(null);
  // Scalar marks the whole document as its own on mount and never undoes it: a `light-mode` or
  // `dark-mode` class on <body> (its CSS gives those a color-scheme) and
  // `history.scrollRestoration = "manual"`. Left behind, the console after a client-side navigation
  // away (the brand link, the back button, a console link) keeps Scalar's color-scheme and loses
  // the browser's scroll restoration on back/forward. A layout effect: it runs before Scalar mounts
  // (ApiReferenceReact mounts in a passive effect), so it reads the value Scalar is about to change.
  useLayoutEffect(() => {
    const restoration = window.history.scrollRestoration;
    return () => {
      document.body.classList.remove('light-mode', 'dark-mode');
      window.history.scrollRestoration = restoration;
    };
  }, []);
  useEffect(() => {
    const el = root.current;
    if (!el) return;
    let pending = labelRegions(el);
    // Scalar renders lazily and mutates its DOM on every scroll: scan only when a card appeared
    // (or one is still waiting for its operation's heading).
    const observer = new MutationObserver((records) => {
      if (pending > 0 || addsExampleCard(records)) pending = labelRegions(el);
    });
    observer.observe(el, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);
  // One object per theme: ApiReferenceReact hands a new object to Scalar on every render otherwise.
  const configuration = useMemo(
    () => ({
      url: DOCUMENT_URL,
      // Scalar's hosted AI agent would send the document elsewhere; so would its MCP button.
      agent: { disabled: true },
      mcp: { disabled: true },
      hideSearch: false,
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      hideTestRequestButton: true,
      showDeveloperTools: 'never' as const,
      hideDarkModeToggle: true,
      forceDarkModeState: dark ? ('dark' as const) : ('light' as const),
      documentDownloadType: 'json' as const,
      layout: 'modern' as const,
      // No credentials in localStorage: the page has no client, and a shared machine keeps nothing.
      persistAuth: false,
      // An empty proxy means "no proxy": left unset, Scalar's web layout routes requests through
      // proxy.scalar.com. Its other services (dashboard, registry, api.scalar.com: used only by the
      // agent, the MCP button and the developer tools, all off here) point at a path of this
      // origin that does not exist, so a feature a later Scalar turns on by default fails here
      // instead of calling out (the CSP's connect-src 'self' would block it anyway).
      proxyUrl: '',
      externalUrls: {
        dashboardUrl: SCALAR_SERVICES_OFF,
        registryUrl: SCALAR_SERVICES_OFF,
        proxyUrl: SCALAR_SERVICES_OFF,
        apiBaseUrl: SCALAR_SERVICES_OFF,
      },
    }),
    [dark],
  );
  return (
    <div ref={root} className={styles.reference} data-testid="api-reference">
      <ApiReferenceReact key={dark ? 'dark' : 'light'} configuration={configuration} />
    </div>
  );
}
