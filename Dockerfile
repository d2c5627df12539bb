# lanleader in a container: a static binary on distroless (no shell, no
# libc, runs as uid 65532).
#
#   docker build -t lanleader .
#   docker run -d --name lanleader --network host --restart unless-stopped \
#     -v /etc/lanleader:/etc/lanleader:ro -v lanleader-state:/var/lib/lanleader \
#     lanleader
#
# --network host is required: the nodes find each other with UDP broadcasts
# to the LAN's subnet, and a broadcast does not cross Docker's bridge (nor
# its NAT), so on the default network the node would only ever hear itself
# and lead alone. See docs/install.md ("Container").
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/lanleader/lanleader/internal/version.Version=${VERSION}" \
      -o /out/lanleader ./cmd/lanleader \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/lanleader /usr/bin/lanleader
COPY packaging/lanleader.yaml /etc/lanleader/lanleader.yaml
COPY --from=build --chown=65532:65532 /out/state /var/lib/lanleader
USER 65532:65532
WORKDIR /var/lib/lanleader
ENTRYPOINT ["/usr/bin/lanleader"]
CMD ["run", "--config", "/etc/lanleader/lanleader.yaml"]
