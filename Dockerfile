# A static, non-root image of mafiamail. Build and run:
#
#   docker build -t mafiamail .
#   docker run -d --name mafiamail -v mafiamail:/data \
#     -v "$PWD/mafiamail.toml:/etc/mafiamail/mafiamail.toml:ro" \
#     -e MAFIAMAIL_IMAP_PASSWORD -e MAFIAMAIL_SMTP_PASSWORD mafiamail
#
# The configuration's `database` should be relative ("games.db") or under
# /data, the volume that keeps the games. docker stop sends SIGTERM, which
# stops the host after the message in hand.

FROM golang:1.26 AS build
WORKDIR /src
ENV GOTOOLCHAIN=go1.26.11 CGO_ENABLED=0
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mafiamail ./cmd/mafiamail
# The games' folder, owned by the image's unprivileged user (65532), so
# that a new volume mounted there is writable by it.
RUN mkdir -p /out/data && chmod 0700 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mafiamail /usr/local/bin/mafiamail
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
VOLUME /data
ENTRYPOINT ["/usr/local/bin/mafiamail"]
CMD ["serve", "--config", "/etc/mafiamail/mafiamail.toml"]
