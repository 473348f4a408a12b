// The hash is the console's address: reloading or sharing a URL brings back the same page, namespace
// and data path. Forms: #/data/<ns>/<path>, #/rules/<ns>, #/hooks/<ns>, #/auth, #/usage, #/namespaces.

export const screens = ['data', 'rules', 'hooks', 'auth', 'usage', 'namespaces'];

function decode(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function parseRoute(hash) {
  const text = String(hash).replace(/^#\/?/, '').split('?')[0];
  const parts = text.split('/');
  const screen = screens.includes(parts[0]) ? parts[0] : null;
  const route = { screen };
  if (screen === 'data' || screen === 'rules' || screen === 'hooks') route.ns = decode(parts[1] || '');
  if (screen === 'data') {
    const keys = parts.slice(2).filter(Boolean).map(decode);
    route.path = `/${keys.join('/')}`;
  }
  return route;
}

export function routeHash(route) {
  const ns = encodeURIComponent(route.ns || '');
  switch (route.screen) {
    case 'data': {
      const keys = String(route.path || '/').split('/').filter(Boolean).map(encodeURIComponent);
      return `#/data/${ns}/${keys.join('/')}`;
    }
    case 'rules': return `#/rules/${ns}`;
    case 'hooks': return `#/hooks/${ns}`;
    default: return `#/${route.screen}`;
  }
}
