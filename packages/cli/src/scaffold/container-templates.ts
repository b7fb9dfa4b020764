// The container image `nestor init` sets up: a multi-stage Dockerfile (build with the full
// Node image, run on distroless Node as a non-root user) and what the build context leaves out.

export const DOCKERFILE = `# syntax=docker/dockerfile:1
# Written by nestor init. Build:  docker build -t <image> .
# Build stage: the full image has what npm ci and nest build need.
FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

# Run stage: Node 24 on distroless Debian 12 (no shell, no package manager), as the
# non-root user 65532. The same Debian release as the build stage, so native modules load.
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 65532:65532
# The manifests' Deployment sets the operator's flags as environment variables
# (METRICS_BIND_ADDRESS, HEALTH_PROBE_BIND_ADDRESS, LEADER_ELECT, ...), not args, so this stays.
CMD ["dist/main.js"]
`;

export const DOCKERIGNORE = `# Written by nestor init: what the image build never needs.
node_modules
dist
coverage
deploy
.git
*.log
`;
